#!/usr/bin/python3
"""Writes a safetensors file of every low-precision float dtype the
safetensors spec names, and prints what each tensor holds as JSON: its
values decoded to float64 by numpy (independently of tdstudio, from each
format's definition) and their statistics.

Followed (no library here writes these dtypes):
- huggingface/safetensors safetensors/src/tensor.rs at 24b0b285 (Dtype,
  bitsize(), validate): shape counts elements; the data of a tensor is
  numel * bits / 8 bytes;
- the float8 formats as torch/c10 defines them (Float8_e4m3fn.h,
  Float8_e4m3fnuz.h, Float8_e5m2.h, Float8_e5m2fnuz.h, Float8_e8m0fnu.h):
  e4m3fn bias 7, S.1111.111 NaN, no Inf; e5m2 bias 15, IEEE Inf/NaN; the
  FNUZ formats bias 8 and 16, their one NaN at 0x80, no Inf, no -0;
  e8m0fnu 2^(e - 127), 0xFF NaN;
- the OCP MX sub-byte formats (torchao torchao/prototype/custom_fp_utils.py):
  e2m1, e2m3 (bias 1), e3m2 (bias 3), no Inf or NaN; F4 packed two a byte,
  element 0 in the low nibble (torch c10/util/Float4_e2m1fn_x2.h); F6 as a
  little-endian bit stream, element i in bits [6i, 6i + 6) (core/FORMAT.md
  14.2: no writer fixes an order).

usage: make_low_precision.py OUT.safetensors  ->  JSON on stdout:
  {"tensors": {name: {"dtype", "shape", "values": [first 64], "stats": {...}}}}
"""
import json
import struct
import sys

import numpy as np


def minifloat(codes, ebits, mbits, bias, nan_codes=(), inf=False, unsigned=False):
    """float64 values of `codes` in a sign/exponent/mantissa format."""
    codes = codes.astype(np.int64)
    total = ebits + mbits + (0 if unsigned else 1)
    sign = np.where((codes >> (total - 1)) & 1, -1.0, 1.0) if not unsigned else 1.0
    e = (codes >> mbits) & ((1 << ebits) - 1)
    m = (codes & ((1 << mbits) - 1)).astype(np.float64)
    normal = (1 + m / 2.0 ** mbits) * np.exp2(e.astype(np.float64) - bias)
    sub = (m / 2.0 ** mbits) * 2.0 ** (1 - bias)
    v = sign * np.where(e == 0, sub, normal)
    if inf:  # IEEE: top exponent is Inf (mantissa 0) or NaN
        top = e == (1 << ebits) - 1
        v = np.where(top & (m == 0), sign * np.inf, v)
        v = np.where(top & (m != 0), np.nan, v)
    for c in nan_codes:
        v = np.where(codes == c, np.nan, v)
    return v


def decode(name, codes):
    if name == "F8_E4M3":
        return minifloat(codes, 4, 3, 7, nan_codes=(0x7F, 0xFF))
    if name == "F8_E4M3FNUZ":
        return minifloat(codes, 4, 3, 8, nan_codes=(0x80,))
    if name == "F8_E5M2":
        return minifloat(codes, 5, 2, 15, inf=True)
    if name == "F8_E5M2FNUZ":
        return minifloat(codes, 5, 2, 16, nan_codes=(0x80,))
    if name == "F4":
        return minifloat(codes, 2, 1, 1)
    if name == "F6_E2M3":
        return minifloat(codes, 2, 3, 1)
    if name == "F6_E3M2":
        return minifloat(codes, 3, 2, 3)
    if name == "F8_E8M0":
        v = np.exp2(codes.astype(np.float64) - 127)
        return np.where(codes == 0xFF, np.nan, v)
    raise ValueError(name)


def pack(name, codes):
    """The file bytes of sub-byte codes; the codes themselves for F8."""
    codes = codes.astype(np.uint64)
    if name == "F4":
        return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8).tobytes()
    if name.startswith("F6"):
        a, b, c, d = codes[0::4], codes[1::4], codes[2::4], codes[3::4]
        word = a | (b << 6) | (c << 12) | (d << 18)  # 24 bits, little-endian
        out = np.stack([word & 0xFF, (word >> 8) & 0xFF, (word >> 16) & 0xFF], axis=1)
        return out.astype(np.uint8).tobytes()
    return codes.astype(np.uint8).tobytes()


def stats(v):
    finite = v[np.isfinite(v)]
    out = {"nan": int(np.isnan(v).sum()), "inf": int(np.isinf(v).sum())}
    if finite.size:
        out.update(min=float(finite.min()), max=float(finite.max()),
                   mean=float(finite.mean()), std=float(finite.std()))
    else:
        out.update(min=None, max=None, mean=None, std=None)
    return out


def main():
    rng = np.random.default_rng(34)
    tensors = {}  # name -> (dtype, shape, bytes, values)
    for name in ["F8_E4M3", "F8_E4M3FNUZ", "F8_E5M2", "F8_E5M2FNUZ", "F8_E8M0"]:
        # Weights: random codes.
        every = np.arange(256, dtype=np.uint8)
        tensors[name.lower() + ".every_code"] = (name, [16, 16], every.tobytes(), decode(name, every))
        many = rng.integers(0, 256, size=3 * 65541, dtype=np.uint8)
        tensors[name.lower() + ".weights"] = (name, [3, 65541], many.tobytes(), decode(name, many))
    for name, bits in [("F4", 4), ("F6_E2M3", 6), ("F6_E3M2", 6)]:
        every = np.arange(1 << bits, dtype=np.uint8)
        tensors[name.lower() + ".every_code"] = (name, [len(every)], pack(name, every),
                                                 decode(name, every))
        many = rng.integers(0, 1 << bits, size=(96, 1028), dtype=np.uint8).ravel()
        tensors[name.lower() + ".weights"] = (name, [96, 1028], pack(name, many),
                                              decode(name, many))
    header = {"__metadata__": {"format": "pt"}}
    data = b""
    for key in sorted(tensors):
        dtype, shape, raw, _ = tensors[key]
        header[key] = {"dtype": dtype, "shape": shape,
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(sys.argv[1], "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)

    def listed(v):
        return [None if np.isnan(x) else ("inf" if x == np.inf else "-inf" if x == -np.inf else x)
                for x in v.tolist()]
    print(json.dumps({"tensors": {k: {"dtype": d, "shape": s, "values": listed(v[:64]),
                                      "stats": stats(v)}
                                  for k, (d, s, _, v) in tensors.items()}}))


if __name__ == "__main__":
    main()
