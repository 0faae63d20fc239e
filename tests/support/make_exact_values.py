#!/usr/bin/python3
"""Checkpoints that test exact values, written by the real torch (Debian's
python3-torch 1.13), with what they hold computed independently by numpy.

usage: make_exact_values.py OUTDIR

Writes, and prints as JSON on stdout, what each holds:
  legacy_p{0..5}.pt  torch.save(..., _use_new_zipfile_serialization=False,
                     pickle_protocol=p): a [2, 3] float32 tensor "w", ints of
                     every size, a float, a str
  bigints.pt         ints inside and outside int64 (the zip layout)
  int_str_keys.pt    the keys 0 and '0' in one dict
  quantized.pt       a quantized tensor beside a plain one
For each tensor: dtype, shape and the sha256 of its C-order bytes (numpy).
"""
import hashlib
import json
import sys

import numpy as np
import torch

out = sys.argv[1]
INTS = {
    "i62": 2**62,
    "u64max": 2**64 - 1,
    "i70": 2**70,
    "i100": 2**100,
    "neg64": -(2**64),
    "neg_big": -(2**100) + 7,
    "small": -5,
}


def tensor_facts(array):
    return {
        "dtype": str(array.dtype),
        "shape": list(array.shape),
        "sha256": hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest(),
    }


expected = {"ints": {k: str(v) for k, v in INTS.items()}}

w = np.arange(6, dtype=np.float32).reshape(2, 3) * 1.5 - 2
for p in range(6):
    data = {"w": torch.from_numpy(w.copy()), "f": 0.1, "s": "text"}
    data.update(INTS)
    torch.save(data, f"{out}/legacy_p{p}.pt", _use_new_zipfile_serialization=False,
               pickle_protocol=p)
expected["w"] = tensor_facts(w)

torch.save(dict(INTS), f"{out}/bigints.pt")

a = np.arange(3, dtype=np.int64)
b = np.ones(2, dtype=np.float32)
torch.save({0: torch.from_numpy(a), "0": torch.from_numpy(b)}, f"{out}/int_str_keys.pt")

plain = np.arange(4, dtype=np.int64)
q = torch.quantize_per_tensor(torch.tensor([0.1, 0.2, 0.3]), 0.1, 0, torch.quint8)
torch.save({"q": q, "plain": torch.from_numpy(plain)}, f"{out}/quantized.pt")
expected["plain"] = tensor_facts(plain)

json.dump(expected, sys.stdout)
