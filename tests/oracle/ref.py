#!/usr/bin/python3
"""ref.py - the exact reference for logitlab's Llama forward pass.

It reads a GGUF file with its own small parser, dequantizes every weight block to the real
number the block stands for (in float64: no rounding of the scales' products), and runs the
Llama forward pass in float64 on the token ids that llama.cpp chose (taken from llama_oracle's
output). It prints the same line format as llama_oracle (tests/oracle/README.md): the top
logits of the last prompt position, the sum and sum of squares of the whole row, its argmax
and the greedy continuation.

Nothing here comes from llama.cpp's Python package: the GGUF layout and the block layouts were
learned from the format's documentation and ggml's headers, and written down afresh.

usage: /usr/bin/python3 tests/oracle/ref.py -m FILE.gguf --oracle LLAMA.txt
           [--save-logits OUT.npy] [--name NAME] [--gen TEXT] [--no-greedy] [--mimic-llama]
(Debian's python3 with numpy 1.24; the prompts and token ids come from LLAMA.txt.)
"""
import argparse
import mmap
import struct
import sys

import numpy as np

# ---------------------------------------------------------------------------------------------
# GGUF: a little-endian header (magic, version, tensor count, key/value count), the key/value
# pairs, the tensor descriptions, then the tensor data at an aligned offset.

SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
          10: "<Q", 11: "<q", 12: "<d"}
T_STRING, T_ARRAY = 8, 9

# ggml type id -> (name, elements per block, bytes per block)
TYPES = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    20: ("IQ4_NL", 32, 18),
    23: ("IQ4_XS", 256, 136),
    30: ("BF16", 1, 2),
}


class GgufError(Exception):
    pass


class Reader:
    def __init__(self, buf, path):
        self.buf, self.pos, self.path = buf, 0, path

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise GgufError(f"{self.path}: truncated at byte {self.pos}")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def scalar(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        n = self.scalar("<Q")
        return bytes(self.take(n)).decode("utf-8", errors="surrogateescape")

    def strings(self, n):
        """n strings in a row (a vocabulary, merges): the same as n string() calls, faster."""
        buf, pos, out = self.buf, self.pos, []
        for _ in range(n):
            if pos + 8 > len(buf):
                raise GgufError(f"{self.path}: truncated at byte {pos}")
            (k,) = struct.unpack_from("<Q", buf, pos)
            if pos + 8 + k > len(buf):
                raise GgufError(f"{self.path}: truncated at byte {pos}")
            out.append(bytes(buf[pos + 8:pos + 8 + k]).decode("utf-8", errors="surrogateescape"))
            pos += 8 + k
        self.pos = pos
        return out

    def value(self, t):
        if t in SCALAR:
            return self.scalar(SCALAR[t])
        if t == T_STRING:
            return self.string()
        if t == T_ARRAY:
            et, n = self.scalar("<I"), self.scalar("<Q")
            if et in SCALAR and et != 7:
                fmt = SCALAR[et]
                size = struct.calcsize(fmt)
                return np.frombuffer(self.take(n * size), dtype=np.dtype(fmt)).copy()
            if et == T_STRING:
                return self.strings(n)
            return [self.value(et) for _ in range(n)]
        raise GgufError(f"{self.path}: unknown metadata type {t}")


class Gguf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        r = Reader(memoryview(self.map), path)
        if bytes(r.take(4)) != b"GGUF":
            raise GgufError(f"{path}: not a GGUF file")
        self.version = r.scalar("<I")
        if self.version not in (2, 3):
            raise GgufError(f"{path}: GGUF version {self.version}")
        n_tensors, n_kv = r.scalar("<Q"), r.scalar("<Q")
        self.meta = {}
        for _ in range(n_kv):
            key = r.string()
            self.meta[key] = r.value(r.scalar("<I"))
        self.tensors = {}
        for _ in range(n_tensors):
            name = r.string()
            dims = [r.scalar("<Q") for _ in range(r.scalar("<I"))]
            t, off = r.scalar("<I"), r.scalar("<Q")
            self.tensors[name] = (t, dims, off)
        align = int(self.meta.get("general.alignment", 32))
        self.data = (r.pos + align - 1) // align * align

    def tensor(self, name):
        """The tensor as float64, shaped (ne[n-1], ..., ne[0]) (rows of ne[0] numbers)."""
        if name not in self.tensors:
            raise GgufError(f"{self.path}: no tensor {name}")
        t, dims, off = self.tensors[name]
        if t not in TYPES:
            raise GgufError(f"{self.path}: {name}: unsupported type {t}")
        tname, per_block, block_bytes = TYPES[t]
        n = int(np.prod(dims))
        nbytes = n // per_block * block_bytes
        start = self.data + off
        if start + nbytes > len(self.map):
            raise GgufError(f"{self.path}: {name} runs past the end of the file")
        raw = np.frombuffer(self.map, dtype=np.uint8, count=nbytes, offset=start)
        return DEQUANT[tname](raw).reshape(list(reversed(dims)))


# ---------------------------------------------------------------------------------------------
# Dequantization: each block is turned into the numbers it encodes, computed in float64.


def half(raw_pairs):
    """Little-endian IEEE half floats (an (..., 2) uint8 array) as float64."""
    return np.ascontiguousarray(raw_pairs).view("<f2")[..., 0].astype(np.float64)


def dq_f32(raw):
    return raw.view("<f4").astype(np.float64)


def dq_f16(raw):
    return raw.view("<f2").astype(np.float64)


def dq_bf16(raw):
    # bfloat16 is the top half of a float32.
    return (raw.view("<u2").astype(np.uint32) << 16).view("<f4").astype(np.float64)


def dq_q8_0(raw):
    b = raw.reshape(-1, 34)
    d = half(b[:, 0:2])
    q = b[:, 2:].view(np.int8).astype(np.float64)
    return (d[:, None] * q).reshape(-1)


def dq_q4_0(raw):
    # 16 bytes of nibbles: the low nibbles are elements 0..15, the high ones 16..31, offset 8.
    b = raw.reshape(-1, 18)
    d = half(b[:, 0:2])
    qs = b[:, 2:].astype(np.int64)
    q = np.concatenate([(qs & 0xF) - 8, (qs >> 4) - 8], axis=1).astype(np.float64)
    return (d[:, None] * q).reshape(-1)


def nibbles32(qs):
    """The 4-bit numbers of blocks of 32 (Q4_0's order): per 16 bytes, the 16 low nibbles are
    elements 0..15, the high ones 16..31. (nb, 16) bytes -> (nb, 32)."""
    qs = qs.astype(np.int64)
    return np.concatenate([qs & 0xF, qs >> 4], axis=1)


def fifth_bits(qh):
    """Q5_0 and Q5_1: element j's fifth bit is bit j of a little-endian 32-bit word. (nb, 32)."""
    w = qh.astype(np.int64)
    word = w[:, 0] | (w[:, 1] << 8) | (w[:, 2] << 16) | (w[:, 3] << 24)
    return (word[:, None] >> np.arange(32)) & 1


def dq_q4_1(raw):
    # The step d and the block's minimum m: element = d * n + m, n = 0..15.
    b = raw.reshape(-1, 20)
    d, m = half(b[:, 0:2]), half(b[:, 2:4])
    q = nibbles32(b[:, 4:20]).astype(np.float64)
    return (d[:, None] * q + m[:, None]).reshape(-1)


def dq_q5_0(raw):
    # d, then the fifth bits, then the low nibbles: element = d * (n - 16), n = 0..31.
    b = raw.reshape(-1, 22)
    d = half(b[:, 0:2])
    q = (nibbles32(b[:, 6:22]) + 16 * fifth_bits(b[:, 2:6]) - 16).astype(np.float64)
    return (d[:, None] * q).reshape(-1)


def dq_q5_1(raw):
    # d, m, the fifth bits, the low nibbles: element = d * n + m, n = 0..31.
    b = raw.reshape(-1, 24)
    d, m = half(b[:, 0:2]), half(b[:, 2:4])
    q = (nibbles32(b[:, 8:24]) + 16 * fifth_bits(b[:, 4:8])).astype(np.float64)
    return (d[:, None] * q + m[:, None]).reshape(-1)


# IQ4_NL's and IQ4_XS's sixteen levels: a 4-bit index n stands for level[n] times the scale.
IQ4_LEVELS = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                      np.float64)


def dq_iq4_nl(raw):
    b = raw.reshape(-1, 18)
    d = half(b[:, 0:2])
    return (d[:, None] * IQ4_LEVELS[nibbles32(b[:, 2:18])]).reshape(-1)


def dq_iq4_xs(raw):
    # Eight sub-blocks of 32, each with a 6-bit scale stored plus 32: its low four bits a nibble
    # of bytes 4..7 (sub-block j: byte 4 + j // 2, low nibble for even j), its top two bits
    # 2j, 2j + 1 of the little-endian 16-bit word at bytes 2..3. Indices as IQ4_NL's.
    b = raw.reshape(-1, 136)
    d = half(b[:, 0:2])
    sh = b[:, 2].astype(np.int64) | (b[:, 3].astype(np.int64) << 8)
    sl = b[:, 4:8].astype(np.int64)
    j = np.arange(8)
    ls = ((sl[:, j // 2] >> (4 * (j % 2))) & 0xF) | (((sh[:, None] >> (2 * j)) & 3) << 4)
    q = IQ4_LEVELS[nibbles32(b[:, 8:136].reshape(-1, 16)).reshape(-1, 8, 32)]
    return ((d[:, None] * (ls - 32))[:, :, None] * q).reshape(-1)


def two_bit_runs(qs):
    """Q2_K and Q3_K's 2-bit numbers: in each half of 128 elements, byte l of its 32 gives bits
    2k and 2k + 1 to element 32k + l. (nb, 64) bytes -> (nb, 256)."""
    qs = qs.astype(np.int64).reshape(-1, 2, 1, 32)
    return ((qs >> (2 * np.arange(4)).reshape(1, 1, 4, 1)) & 3).reshape(-1, 256)


def dq_q2_k(raw):
    # 16 scale bytes (group g = element // 16: a 4-bit scale, low, and a 4-bit min, high), the
    # 2-bit numbers, d, dmin: element = d * scale * n - dmin * min.
    b = raw.reshape(-1, 84)
    sc = b[:, 0:16].astype(np.int64)
    q = two_bit_runs(b[:, 16:80]).reshape(-1, 16, 16).astype(np.float64)
    d, dmin = half(b[:, 80:82]), half(b[:, 82:84])
    x = (d[:, None] * (sc & 0xF))[:, :, None] * q - (dmin[:, None] * (sc >> 4))[:, :, None]
    return x.reshape(-1)


def dq_q3_k(raw):
    # hmask (32 bytes), the 2-bit numbers, 12 bytes of sixteen 6-bit scales, d. Element
    # 32j + l (j = 0..7) has the third bit j of hmask[l]: when clear, 4 is taken off the two
    # bits (-4..3). Scale g: low four bits the low (g < 8) or high nibble of byte g % 8, top two
    # bits 2 (g // 4), 2 (g // 4) + 1 of byte 8 + g % 4; stored plus 32.
    b = raw.reshape(-1, 110)
    hm = b[:, 0:32].astype(np.int64)
    high = ((hm[:, None, :] >> np.arange(8)[None, :, None]) & 1).reshape(-1, 256)
    q = (two_bit_runs(b[:, 32:96]) - 4 * (1 - high)).reshape(-1, 16, 16).astype(np.float64)
    s = b[:, 96:108].astype(np.int64)
    g = np.arange(16)
    low = np.concatenate([s[:, 0:8] & 0xF, s[:, 0:8] >> 4], axis=1)
    top = (s[:, 8 + g % 4] >> (2 * (g // 4))) & 3
    d = half(b[:, 108:110])
    x = (d[:, None] * ((low | (top << 4)) - 32))[:, :, None] * q
    return x.reshape(-1)


def k_scales(sc):
    """The eight 6-bit (scale, min) pairs packed in a K-quant block's 12 bytes."""
    sc = sc.astype(np.int64)
    s = np.empty((sc.shape[0], 8), np.int64)
    m = np.empty((sc.shape[0], 8), np.int64)
    # Sub-blocks 0..3 keep their low 6 bits in bytes 0..3 (scales) and 4..7 (mins);
    # sub-blocks 4..7 take 4 bits from bytes 8..11 and their top 2 bits from those bytes' tops.
    s[:, 0:4] = sc[:, 0:4] & 63
    m[:, 0:4] = sc[:, 4:8] & 63
    s[:, 4:8] = (sc[:, 8:12] & 0xF) | ((sc[:, 0:4] >> 6) << 4)
    m[:, 4:8] = (sc[:, 8:12] >> 4) | ((sc[:, 4:8] >> 6) << 4)
    return s.astype(np.float64), m.astype(np.float64)


def nibble_chunks(qs):
    """K-quant 4-bit values: per 32 bytes, 32 low nibbles then 32 high ones. (nb, 256)."""
    qs = qs.astype(np.int64).reshape(-1, 4, 32)
    return np.stack([qs & 0xF, qs >> 4], axis=2).reshape(-1, 256)


def dq_q4_k(raw):
    b = raw.reshape(-1, 144)
    d, dmin = half(b[:, 0:2]), half(b[:, 2:4])
    s, m = k_scales(b[:, 4:16])
    q = nibble_chunks(b[:, 16:144]).reshape(-1, 8, 32).astype(np.float64)
    x = (d[:, None] * s)[:, :, None] * q - (dmin[:, None] * m)[:, :, None]
    return x.reshape(-1)


def dq_q5_k(raw):
    b = raw.reshape(-1, 176)
    d, dmin = half(b[:, 0:2]), half(b[:, 2:4])
    s, m = k_scales(b[:, 4:16])
    qh = b[:, 16:48].astype(np.int64)
    low = nibble_chunks(b[:, 48:176]).reshape(-1, 8, 32)
    # The fifth bit of sub-block j, element l, is bit j of qh[l].
    high = np.stack([(qh >> j) & 1 for j in range(8)], axis=1)
    q = (low + 16 * high).astype(np.float64)
    x = (d[:, None] * s)[:, :, None] * q - (dmin[:, None] * m)[:, :, None]
    return x.reshape(-1)


def dq_q6_k(raw):
    b = raw.reshape(-1, 210)
    ql = b[:, 0:128].astype(np.int64).reshape(-1, 2, 64)
    qh = b[:, 128:192].astype(np.int64).reshape(-1, 2, 32)
    sc = b[:, 192:208].view(np.int8).astype(np.float64).reshape(-1, 2, 8)
    d = half(b[:, 208:210])
    # Per half of 128: four runs of 32, each a nibble of ql with two bits of qh on top.
    runs = [
        (ql[:, :, 0:32] & 0xF) | (((qh >> 0) & 3) << 4),
        (ql[:, :, 32:64] & 0xF) | (((qh >> 2) & 3) << 4),
        (ql[:, :, 0:32] >> 4) | (((qh >> 4) & 3) << 4),
        (ql[:, :, 32:64] >> 4) | (((qh >> 6) & 3) << 4),
    ]
    q = (np.stack(runs, axis=2) - 32).astype(np.float64)  # (nb, 2, 4, 32)
    # Each run of 32 has two scales, one per 16 elements: run r uses scales 2r and 2r+1.
    scale = sc.reshape(-1, 2, 4, 2)
    x = q.reshape(-1, 2, 4, 2, 16) * scale[..., None] * d[:, None, None, None, None]
    return x.reshape(-1)


DEQUANT = {"F32": dq_f32, "F16": dq_f16, "BF16": dq_bf16, "Q8_0": dq_q8_0, "Q4_0": dq_q4_0,
           "Q4_1": dq_q4_1, "Q5_0": dq_q5_0, "Q5_1": dq_q5_1, "IQ4_NL": dq_iq4_nl,
           "Q2_K": dq_q2_k, "Q3_K": dq_q3_k, "Q4_K": dq_q4_k, "Q5_K": dq_q5_k, "Q6_K": dq_q6_k,
           "IQ4_XS": dq_iq4_xs}


# ---------------------------------------------------------------------------------------------
# The Llama forward pass, in float64.


# ---------------------------------------------------------------------------------------------
# Optional: llama.cpp's rounding of activations, to show that it explains llama.cpp's distance
# from the exact numbers (--mimic-llama). ggml's CPU kernels multiply a weight matrix by a
# vector that they first convert to the weight type's partner: F16 by F16, BF16 by BF16,
# Q8_0, Q4_0, Q5_0 and IQ4_NL by Q8_0 (blocks of 32 with one half-float scale), Q4_1 and Q5_1
# by Q8_1 (the same and a block sum), the K types and IQ4_XS by Q8_K (blocks of 256 with one
# float scale). The products of the rounded numbers are then exact enough.


def round_f16(x):
    return x.astype(np.float32).astype(np.float16).astype(np.float64)


def round_bf16(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16  # to nearest, ties to even
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def round_q8_0(x):
    b = x.astype(np.float32).reshape(-1, 32)
    amax = np.abs(b).max(axis=1, keepdims=True)
    d = amax / np.float32(127)
    # 127 / amax, not 1 / d: the two differ in the last bit, and the vectorized kernels take
    # this one; a single element rounded the other way moves a tiny model's logits visibly.
    inv = np.where(amax > 0, np.float32(127) / np.where(amax > 0, amax, 1), 0).astype(np.float32)
    q = np.rint(b * inv)
    return (d.astype(np.float16).astype(np.float64) * q).reshape(x.shape)


def round_q8_k(x):
    b = x.astype(np.float32).reshape(-1, 256)
    idx = np.abs(b).argmax(axis=1)
    mx = b[np.arange(b.shape[0]), idx][:, None]
    iscale = np.where(mx != 0, np.float32(-127) / np.where(mx != 0, mx, 1), 0).astype(np.float32)
    q = np.minimum(np.rint(iscale * b), 127)
    d = np.where(iscale != 0, np.float32(1) / np.where(iscale != 0, iscale, 1), 0)
    return (d.astype(np.float32).astype(np.float64) * q).reshape(x.shape)


# Q4_1 and Q5_1 meet Q8_1: Q8_0's numbers, plus a sum of each block that the kernels use for
# the minimum's term (kept in f16, which this does not model).
ACT_ROUND = {"F32": None, "F16": round_f16, "BF16": round_bf16, "Q8_0": round_q8_0,
             "Q4_0": round_q8_0, "Q4_1": round_q8_0, "Q5_0": round_q8_0, "Q5_1": round_q8_0,
             "IQ4_NL": round_q8_0, "Q2_K": round_q8_k, "Q3_K": round_q8_k, "Q4_K": round_q8_k,
             "Q5_K": round_q8_k, "Q6_K": round_q8_k, "IQ4_XS": round_q8_k}


class Weight:
    """A matrix in float64 and, for --mimic-llama, how llama.cpp rounds what it multiplies.
    `x @ weight` is x times the matrix's transpose (rows of x are activation vectors)."""

    __array_ufunc__ = None  # so that numpy leaves `x @ weight` to __rmatmul__

    def __init__(self, g, name, mimic, w=None):
        self.w = g.tensor(name) if w is None else w
        self.round = ACT_ROUND[TYPES[g.tensors[name][0]][0]] if mimic else None

    def __rmatmul__(self, x):
        if self.round is not None:
            x = self.round(x)
        return x @ self.w.T


# The architectures, as src/gguf/arch.def switches them (written here from the models' papers
# and llama.cpp's documented conventions, not from logitlab's code): whether Q, K and V add a
# bias, whether the rotary pairs are (i, i + n_rot/2) (ggml's NEOX mode) or adjacent, and
# whether each head of Q and K is RMS-normed (with its own gain) before the rotation, and
# whether Q, K and V may come as one attn_qkv tensor and the gate and up as one ffn_up of twice
# the rows (Phi-3: the gate's half first, SwiGLU's split), and Gemma 3's differences: the
# embedding times sqrt(n_embd), RMS norms of attention's and the FFN's outputs before they join
# the stream, GELU (tanh form) for the gate, sliding-window layers with their own rope base.
ARCHS = {"llama": {"bias": False, "neox": False, "qk_norm": False, "fused": False, "gemma": False},
         "qwen2": {"bias": True, "neox": True, "qk_norm": False, "fused": False, "gemma": False},
         "qwen3": {"bias": False, "neox": True, "qk_norm": True, "fused": False, "gemma": False},
         "phi3": {"bias": False, "neox": True, "qk_norm": False, "fused": True, "gemma": False},
         "gemma2": {"bias": False, "neox": True, "qk_norm": False, "fused": False, "gemma": True},
         "gemma3": {"bias": False, "neox": True, "qk_norm": True, "fused": False, "gemma": True}}
# The gemmas' sliding window when the file is silent (llama.cpp's rules): the window, the pattern
# (layer l slides when l % pattern < pattern - 1), the sliding layers' rope base (None: the global
# one), the layer count of the model whose scores scale by 1/sqrt(n_embd/n_head) (the 27Bs), and
# Gemma 2's soft-caps of the scores and the logits.
WINDOWS = {"gemma2": {"n_swa": 4096, "pattern": 2, "base_swa": None, "big": 46, "caps": (50.0, 30.0)},
           "gemma3": {"n_swa": 0, "pattern": 6, "base_swa": 10000.0, "big": 62, "caps": None}}


class Llama:
    def __init__(self, g, mimic=False, n_ctx=1024):
        arch = g.meta.get("general.architecture")
        if arch not in ARCHS:
            raise GgufError(f"{g.path}: architecture {arch!r}, not one of {sorted(ARCHS)}")
        self.bias, self.neox = ARCHS[arch]["bias"], ARCHS[arch]["neox"]
        self.qk_norm, self.gemma = ARCHS[arch]["qk_norm"], ARCHS[arch]["gemma"]
        self.mimic = mimic

        def key(k, default=None):
            v = g.meta.get(f"{arch}.{k}", default)
            if v is None:
                raise GgufError(f"{g.path}: no {arch}.{k}")
            return v

        self.n_layer = int(key("block_count"))
        self.n_embd = int(key("embedding_length"))
        self.n_head = int(key("attention.head_count"))
        self.n_kv = int(key("attention.head_count_kv", self.n_head))
        self.head_dim = int(key("attention.key_length", self.n_embd // self.n_head))
        self.eps = float(key("attention.layer_norm_rms_epsilon"))
        self.n_rot = int(key("rope.dimension_count", self.head_dim))
        base = float(key("rope.freq_base", 10000.0))
        self.embd = g.tensor("token_embd.weight")
        self.out_norm = g.tensor("output_norm.weight")
        if "output.weight" in g.tensors:
            self.head = Weight(g, "output.weight", mimic)
        else:  # tied: the head is the embedding matrix itself
            self.head = Weight(g, "token_embd.weight", mimic, self.embd)
        self.n_vocab = self.head.w.shape[0]
        mats = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]
        self.layers = []
        for i in range(self.n_layer):
            w = self.fused(g, i, mimic) if ARCHS[arch]["fused"] else {}
            w.update({n: Weight(g, f"blk.{i}.{n}.weight", mimic) for n in mats if n not in w})
            for n in ("attn_norm", "ffn_norm"):
                w[n] = g.tensor(f"blk.{i}.{n}.weight")
            for n in ("attn_q", "attn_k", "attn_v"):
                w[n + ".bias"] = g.tensor(f"blk.{i}.{n}.bias").reshape(-1) if self.bias else 0.0
            for n in ("attn_q_norm", "attn_k_norm"):
                w[n] = g.tensor(f"blk.{i}.{n}.weight").reshape(-1) if self.qk_norm else None
            for n in ("post_attention_norm", "post_ffw_norm"):
                w[n] = g.tensor(f"blk.{i}.{n}.weight").reshape(-1) if self.gemma else None
            self.layers.append(w)
        # Gemma 3: every layer but each pattern-th slides over the last n_swa positions and turns
        # by its own base, unscaled; the score scale of the 62-layer 27B is 1/sqrt(n_embd/n_head).
        win = WINDOWS.get(arch)
        self.n_swa = int(key("attention.sliding_window", win["n_swa"])) if win else 0
        self.pattern = int(key("attention.sliding_window_pattern", win["pattern"])) if win else 0
        base_swa = float(key("rope.freq_base_swa", win["base_swa"] or base)) if win else base
        self.scale = 1.0 / np.sqrt(self.head_dim)
        if win and self.n_layer == win["big"]:
            self.scale = 1.0 / np.sqrt(self.n_embd // self.n_head)
        caps = win["caps"] if win and win["caps"] else (0.0, 0.0)
        self.attn_softcap = float(key("attn_logit_softcapping", caps[0]))
        self.softcap = float(key("final_logit_softcapping", caps[1]))
        # Rotary frequencies of adjacent pairs (2i, 2i+1): base^(-2i/n_rot), divided by
        # Llama 3.1's per-frequency factors when the file carries them.
        i = np.arange(self.n_rot // 2, dtype=np.float64)
        freq = base ** (-2.0 * i / self.n_rot)
        factors = None
        if "rope_freqs.weight" in g.tensors:
            factors = g.tensor("rope_freqs.weight").reshape(-1)
        elif g.meta.get(f"{arch}.rope.scaling.type") == "llama3":
            factors = llama3_factors(g, freq)
        elif "rope_factors_long.weight" in g.tensors:
            # Phi-3: the long factors for a context longer than the original one (llama.cpp's
            # rule; its oracle runs a context of 1,024), else the short ones
            orig = int(key("rope.scaling.original_context_length", key("context_length")))
            which = "long" if n_ctx > orig else "short"
            factors = g.tensor(f"rope_factors_{which}.weight").reshape(-1)
        if factors is not None:
            freq = freq / factors
        # LongRoPE's attention factor multiplies every rotated value of Q and K
        self.mscale = float(key("rope.scaling.attn_factor", 1.0))
        if g.meta.get(f"{arch}.rope.scaling.type") == "linear":
            freq = freq / float(g.meta[f"{arch}.rope.scaling.factor"])
        self.freq = freq
        self.freq_swa = base_swa ** (-2.0 * i / self.n_rot)
        self.reset()

    def slides(self, li):
        return self.n_swa > 0 and (self.pattern == 0 or li % self.pattern < self.pattern - 1)

    def reset(self):
        self.k = [np.zeros((0, self.n_kv, self.head_dim)) for _ in range(self.n_layer)]
        self.v = [np.zeros((0, self.n_kv, self.head_dim)) for _ in range(self.n_layer)]

    def norm(self, x, gain):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * gain

    def rope(self, x, pos, freq):
        """Rotates pair i of each head by pos * freq[i]: the values (2i, 2i+1), or (i, i +
        n_rot/2) in the NEOX mode."""
        ang = pos[:, None] * freq[None, :]  # (T, n_rot/2)
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        y = x.copy()
        half = self.n_rot // 2
        first = slice(0, half) if self.neox else slice(0, self.n_rot, 2)
        second = slice(half, self.n_rot) if self.neox else slice(1, self.n_rot, 2)
        a, b = x[..., first], x[..., second]
        y[..., first] = (a * c - b * s) * self.mscale
        y[..., second] = (a * s + b * c) * self.mscale
        return y

    def fused(self, g, i, mimic):
        """Phi-3's matrices cut from its fused tensors by rows: attn_qkv into Q, K, V (when the
        file fuses them), ffn_up into the gate (first half) and the up."""
        w, q, kv = {}, self.n_head * self.head_dim, self.n_kv * self.head_dim
        name = f"blk.{i}.attn_qkv.weight"
        if name in g.tensors:
            m = g.tensor(name)
            for n, rows in (("attn_q", m[:q]), ("attn_k", m[q:q + kv]), ("attn_v", m[q + kv:])):
                w[n] = Weight(g, name, mimic, rows)
        name = f"blk.{i}.ffn_up.weight"
        m = g.tensor(name)
        ff = m.shape[0] // 2
        w["ffn_gate"], w["ffn_up"] = Weight(g, name, mimic, m[:ff]), Weight(g, name, mimic, m[ff:])
        return w

    def step(self, tokens):
        """Appends tokens to the cache; returns the logits of the last one."""
        t = len(tokens)
        p0 = self.k[0].shape[0]
        pos = np.arange(p0, p0 + t, dtype=np.float64)
        x = self.embd[np.asarray(tokens)]
        if self.gemma:
            x = x * np.sqrt(self.n_embd)
        group = self.n_head // self.n_kv
        scale = self.scale
        for li, w in enumerate(self.layers):
            freq = self.freq_swa if self.slides(li) else self.freq
            h = self.norm(x, w["attn_norm"])
            q = h @ w["attn_q"] + w["attn_q.bias"]
            k = h @ w["attn_k"] + w["attn_k.bias"]
            q = q.reshape(t, self.n_head, self.head_dim)
            k = k.reshape(t, self.n_kv, self.head_dim)
            if self.qk_norm:  # each head normed over its own values
                q, k = self.norm(q, w["attn_q_norm"]), self.norm(k, w["attn_k_norm"])
            q, k = self.rope(q, pos, freq), self.rope(k, pos, freq)
            v = (h @ w["attn_v"] + w["attn_v.bias"]).reshape(t, self.n_kv, self.head_dim)
            self.k[li] = K = np.concatenate([self.k[li], k])
            self.v[li] = V = np.concatenate([self.v[li], v])
            n = K.shape[0]
            # Query j (at position p0 + j) sees keys 0 .. p0 + j.
            mask = np.arange(n)[None, :] > (p0 + np.arange(t))[:, None]
            if self.slides(li):  # and keys n_swa or more positions back
                mask |= (p0 + np.arange(t))[:, None] - np.arange(n)[None, :] >= self.n_swa
            att = np.empty((t, self.n_head, self.head_dim))
            for hd in range(self.n_head):
                kv = hd // group
                sc = (q[:, hd, :] @ K[:, kv, :].T) * scale
                if self.attn_softcap:  # Gemma 2: every score soft-capped before the mask
                    sc = self.attn_softcap * np.tanh(sc / self.attn_softcap)
                sc[mask] = -np.inf
                sc = np.exp(sc - sc.max(axis=1, keepdims=True))
                sc /= sc.sum(axis=1, keepdims=True)
                att[:, hd, :] = sc @ V[:, kv, :]
            o = att.reshape(t, -1) @ w["attn_output"]
            x = x + (self.norm(o, w["post_attention_norm"]) if self.gemma else o)
            h = self.norm(x, w["ffn_norm"])
            gate, up = h @ w["ffn_gate"], h @ w["ffn_up"]
            if self.gemma:  # GELU's tanh form
                act = gelu(gate, self.mimic)
            else:
                act = gate / (1.0 + np.exp(-gate))
            o = (act * up) @ w["ffn_down"]
            x = x + (self.norm(o, w["post_ffw_norm"]) if self.gemma else o)
        last = self.norm(x[-1:], self.out_norm)
        z = (last @ self.head)[0]
        if self.softcap:
            z = self.softcap * np.tanh(z / self.softcap)
        return z


def gelu(x, mimic=False):
    """GELU's tanh form; with mimic, as ggml's CPU computes it: a table of fp16 inputs and outputs
    between -10 and 10 (GGML_GELU_FP16), 0 below, the input above."""
    if not mimic:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    r = round_f16(x)
    y = round_f16(0.5 * r * (1 + np.tanh(np.sqrt(2 / np.pi) * (r + 0.044715 * r**3))))
    return np.where(x <= -10, 0.0, np.where(x >= 10, x, y))


def llama3_factors(g, freq):
    """Llama 3.1's frequency factors from the metadata, for a file without rope_freqs.weight:
    long wavelengths are slowed by `factor`, short ones kept, the band between interpolated."""
    m = g.meta
    factor = float(m["llama.rope.scaling.factor"])
    lo = float(m.get("llama.rope.scaling.low_freq_factor", 1.0))
    hi = float(m.get("llama.rope.scaling.high_freq_factor", 4.0))
    orig = float(m.get("llama.rope.scaling.original_context_length", 8192))
    wavelen = 2 * np.pi / freq
    smooth = (orig / wavelen - lo) / (hi - lo)
    f = 1.0 / ((1 - smooth) / factor + smooth)
    f = np.where(wavelen < orig / hi, 1.0, f)
    return np.where(wavelen > orig / lo, factor, f)


# ---------------------------------------------------------------------------------------------
# The oracle's line format (tests/oracle/README.md).


def read_oracle(path):
    """The prompt records of a llama_oracle output: (prompt line, special, token ids, greedy N)."""
    recs, cur = [], None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            word = line.split(" ", 1)[0]
            if word == "prompt":
                cur = {"prompt": line}
            elif word == "special":
                cur["special"] = line
            elif word == "tokens":
                cur["tokens"] = [int(x) for x in line.split()[2:]]
            elif word == "greedy":
                cur["greedy"] = int(line.split()[1])
            elif word == "end":
                recs.append(cur)
    return recs


def summary(z, top, out):
    order = np.lexsort((np.arange(z.size), -z))[:top]
    for i in order:
        out.append(f"top {i} {z[i]:.9g}")
    out.append(f"sum {float(np.sum(z)):.17g}")
    out.append(f"sumsq {float(np.sum(z * z)):.17g}")
    out.append(f"argmax {int(order[0])}")


def main():
    ap = argparse.ArgumentParser(description="exact float64 reference of a Llama GGUF")
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--oracle", required=True, help="llama_oracle's output (prompts, token ids)")
    ap.add_argument("--name")
    ap.add_argument("--gen", help="gen_model's arguments, echoed on a line of their own")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--n-ctx", type=int, default=1024,
                    help="the context the model runs in (llama_oracle's), which picks Phi-3's "
                         "long or short rotary factors")
    ap.add_argument("--save-logits")
    ap.add_argument("--no-greedy", action="store_true",
                    help="skip the greedy continuations (`greedy 0`): the prompt rows only")
    ap.add_argument("--mimic-llama", action="store_true",
                    help="round activations as llama.cpp's CPU kernels do (not exact)")
    args = ap.parse_args()
    try:
        g = Gguf(args.model)
        model = Llama(g, args.mimic_llama, args.n_ctx)
    except (GgufError, KeyError) as e:
        sys.exit(f"ref.py: {e}")
    name = args.name or args.model.rsplit("/", 1)[-1]
    kind = "float64, activations rounded as llama.cpp" if args.mimic_llama else "float64"
    out = ["# logitlab-oracle v1", f"source ref.py {kind}", f"model {name}"]
    if args.gen:
        out.append(f"gen {args.gen}")
    out.append(f"n_vocab {model.n_vocab}")
    rows = []
    for rec in read_oracle(args.oracle):
        out += [rec["prompt"], rec["special"],
                "tokens " + " ".join(str(x) for x in [len(rec["tokens"])] + rec["tokens"])]
        model.reset()
        z = model.step(rec["tokens"])
        rows.append(z)
        summary(z, args.top, out)
        cont = []
        n = 0 if args.no_greedy else rec["greedy"]
        for i in range(n):
            cont.append(int(np.argmax(z)))
            if i + 1 < n:
                z = model.step([cont[-1]])
        out.append("greedy " + " ".join(str(x) for x in [n] + cont))
        out.append("end")
    if args.save_logits:
        np.save(args.save_logits, np.array(rows))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
