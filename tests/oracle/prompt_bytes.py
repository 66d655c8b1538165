#!/usr/bin/python3
"""prompt_bytes.py - the prompts of a prompts file (tests/oracle/README.md) as raw bytes:
PREFIX.K holds prompt K's bytes, PREFIX.K.special holds 1 if the prompt is marked `special`,
else 0. The escapes are llama_oracle's: \\\\ \\" \\n \\t \\r \\xHH.

usage: prompt_bytes.py PROMPTS.txt PREFIX      (prints the number of prompts)
"""
import re
import sys

ESC = {b"n": b"\n", b"t": b"\t", b"r": b"\r"}


def unescape(m):
    e = m.group(1)
    return bytes([int(e[1:], 16)]) if e[:1] == b"x" else ESC.get(e, e)


def main():
    k = 0
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            special = line.startswith("special ")
            body = (line[8:] if special else line)[1:-1].encode("utf-8")
            with open(f"{sys.argv[2]}.{k}", "wb") as out:
                out.write(re.sub(rb"\\(x[0-9a-fA-F]{2}|.)", unescape, body))
            with open(f"{sys.argv[2]}.{k}.special", "w") as out:
                out.write("1" if special else "0")
            k += 1
    print(k)


if __name__ == "__main__":
    main()
