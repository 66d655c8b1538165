#!/usr/bin/python3
"""summarize.py - writes full logit rows (a .npy of shape (prompts, V)) in the oracle's line
format (tests/oracle/README.md), so that a program that only saves rows (logitlab's
`show --save-logits`) can be compared like llama_oracle and ref.py.

usage: summarize.py --oracle LLAMA.txt --rows ROWS.npy [--tokens FILE] [--greedy FILE]
                    [--source TEXT] [--top K]
The prompts (and, unless --tokens is given, the token ids) come from LLAMA.txt. --tokens and
--greedy name files with one line of ids per prompt, in the prompts' order; without --greedy
the records say `greedy 0`.
"""
import argparse
import sys

import numpy as np


def id_lines(path):
    with open(path) as f:
        return [[int(x) for x in line.split()] for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--tokens")
    ap.add_argument("--greedy")
    ap.add_argument("--source", default="logitlab")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    rows = np.load(args.rows).astype(np.float64)
    toks = id_lines(args.tokens) if args.tokens else None
    greedy = id_lines(args.greedy) if args.greedy else None
    out, k = [], 0
    with open(args.oracle, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            word = line.split(" ", 1)[0]
            if word == "source":
                out.append(f"source {args.source}")
            elif word == "tokens" and toks is not None:
                out.append("tokens " + " ".join(str(x) for x in [len(toks[k])] + toks[k]))
            elif word in ("top", "sum", "sumsq", "argmax"):
                continue
            elif word == "greedy":
                z = rows[k]
                order = np.lexsort((np.arange(z.size), -z))[:args.top]
                out += [f"top {i} {z[i]:.9g}" for i in order]
                out += [f"sum {float(np.sum(z)):.17g}", f"sumsq {float(np.sum(z * z)):.17g}",
                        f"argmax {int(order[0])}"]
                g = greedy[k] if greedy is not None else []
                out.append("greedy " + " ".join(str(x) for x in [len(g)] + g))
            elif word == "end":
                out.append(line)
                k += 1
            else:
                out.append(line)
    if k != rows.shape[0]:
        sys.exit(f"summarize.py: {args.rows}: {rows.shape[0]} rows for {k} prompts")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
