#!/usr/bin/python3
"""Reads safetensors files with struct + json alone (no tdstudio code) and
prints, as JSON, each file's tensors (dtype, shape, sha256 of their bytes)
and whether the file is laid out exactly as the safetensors library
serializes (safetensors/src/tensor.rs, prepare(): tensors by descending
Dtype rank, then by name; compact JSON with __metadata__ first, padded with
spaces to 8 bytes; data contiguous from offset 0 to the end of the file).

usage: check_safetensors.py FILE...
"""
import hashlib
import json
import struct
import sys

# The Dtype enum of tensor.rs, in its order, with each element's size.
ORDER = [("BOOL", 1), ("F4", 0), ("F6_E2M3", 0), ("F6_E3M2", 0), ("U8", 1), ("I8", 1),
         ("F8_E5M2", 1), ("F8_E4M3", 1), ("F8_E8M0", 1), ("F8_E4M3FNUZ", 1),
         ("F8_E5M2FNUZ", 1), ("I16", 2), ("U16", 2), ("F16", 2), ("BF16", 2), ("I32", 4),
         ("U32", 4), ("F32", 4), ("C64", 8), ("F64", 8), ("I64", 8), ("U64", 8)]
RANK = {name: i for i, (name, _) in enumerate(ORDER)}
SIZE = dict(ORDER)


def check(path):
    with open(path, "rb") as f:
        data = f.read()
    problems = []
    (n,) = struct.unpack("<Q", data[:8])
    text = data[8:8 + n]
    if n % 8:
        problems.append("header length %d is not a multiple of 8" % n)
    header = json.loads(text)
    keys = list(header)
    if keys[:1] != ["__metadata__"] or header["__metadata__"] != {"format": "pt"}:
        problems.append("__metadata__ is not first, or not {format: pt}")
    names = [k for k in keys if k != "__metadata__"]
    expected = sorted(names, key=lambda k: (-RANK[header[k]["dtype"]], k))
    if names != expected:
        problems.append("tensors not in the library's order: %r" % names)
    body = data[8 + n:]
    at = 0
    tensors = {}
    for k in names:
        info = header[k]
        begin, end = info["data_offsets"]
        count = 1
        for d in info["shape"]:
            count *= d
        if begin != at or end - begin != count * SIZE[info["dtype"]]:
            problems.append("%s: data_offsets %r do not follow" % (k, info["data_offsets"]))
        at = end
        tensors[k] = {"dtype": info["dtype"], "shape": info["shape"],
                      "sha256": hashlib.sha256(body[begin:end]).hexdigest()}
    if at != len(body):
        problems.append("data ends at %d of %d" % (at, len(body)))
    again = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    again += b" " * ((8 - len(again) % 8) % 8)
    if again != text:
        problems.append("the header is not the library's compact JSON")
    return {"tensors": tensors, "problems": problems}


print(json.dumps({path: check(path) for path in sys.argv[1:]}))
