#!/usr/bin/python3
"""check_dequant.py - two independent readings of the same GGUF files must agree.

For each file: llama.cpp's own gguf-py (from the fetched source) must open it and list the
same tensors (names, shapes, types) and metadata keys as ref.py's parser; and every tensor that
ref.py dequantizes must equal gguf-py's dequantization of the same bytes (gguf-py computes in
float32, so the two agree to float32 rounding of the block's scale products: relative 1e-6 of
the tensor's largest magnitude). This checks ref.py's block decoding against a second
implementation, and the writer (gen_model) against llama.cpp's reader.

usage: /usr/bin/python3 tests/oracle/check_dequant.py GGUF_PY_DIR FILE.gguf...
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref  # noqa: E402


def check(path, gguf):
    mine = ref.Gguf(path)
    theirs = gguf.GGUFReader(path)
    bad = []
    their_keys = {f.name for f in theirs.fields.values() if not f.name.startswith("GGUF.")}
    if their_keys != set(mine.meta):
        bad.append(f"metadata keys differ: {sorted(their_keys ^ set(mine.meta))}")
    if len(theirs.tensors) != len(mine.tensors):
        bad.append(f"{len(theirs.tensors)} tensors for gguf-py, {len(mine.tensors)} for ref.py")
    worst = 0.0
    for t in theirs.tensors:
        if t.name not in mine.tensors:
            bad.append(f"{t.name}: missing in ref.py")
            continue
        typ, dims, _ = mine.tensors[t.name]
        if [int(x) for x in t.shape] != dims or int(t.tensor_type) != typ:
            bad.append(f"{t.name}: shape/type {list(t.shape)}/{int(t.tensor_type)} vs {dims}/{typ}")
            continue
        a = mine.tensor(t.name).reshape(-1)
        b = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64).reshape(-1)
        scale = max(np.abs(b).max(), 1e-30)
        err = np.abs(a - b).max() / scale
        worst = max(worst, err)
        if err > 1e-6:
            bad.append(f"{t.name} ({ref.TYPES[typ][0]}): max |ref - gguf-py| = {err:.3g} of max")
    name = os.path.basename(path)
    if bad:
        for b in bad:
            print(f"check_dequant: {name}: {b}")
        return False
    print(f"check_dequant: {name}: {len(mine.tensors)} tensors, {len(mine.meta)} keys agree "
          f"with gguf-py (worst {worst:.2g} of max)")
    return True


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check_dequant.py GGUF_PY_DIR FILE.gguf...")
    sys.path.insert(0, sys.argv[1])
    import gguf  # llama.cpp's reader: here only as the second opinion
    ok = all([check(p, gguf) for p in sys.argv[2:]])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
