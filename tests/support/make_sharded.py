#!/usr/bin/python3
"""Writes Hugging Face sharded model folders, as transformers' save_pretrained
writes them, and prints what each tensor is (dtype, shape, sha256 computed
with numpy) as JSON.

Followed, file by file (no library here writes these):
- huggingface_hub src/huggingface_hub/serialization/_base.py at 122aa5cc
  (split_state_dict_into_shards_factory): tensors in state-dict order fill a
  shard until the next would pass max_shard_size; shard files are named
  "{prefix}-{i:05d}-of-{n:05d}.{ext}"; metadata is {"total_size": bytes};
- transformers modeling_utils.py save_pretrained: the index is
  {"metadata", "weight_map"} written by json.dumps(indent=2,
  sort_keys=True) + "\\n"; .bin shards are torch.save of each shard's dict;
- safetensors safetensors/src/tensor.rs (prepare, serialize): tensors sorted
  by descending dtype, then name; the header is compact JSON with
  "__metadata__" first, padded with spaces to 8 bytes, after its length as
  a little-endian u64; data in the same order.

usage: make_sharded.py OUT_DIR [--skip-bin]   ->  OUT_DIR/st, OUT_DIR/bin
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np

# safetensors' Dtype order (derive(Ord) in tensor.rs), for the data layout.
ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32",
         "F32", "F64", "I64", "U64"]
TORCH = {"F32": "torch.float32", "F16": "torch.float16", "BF16": "torch.bfloat16",
         "I64": "torch.int64", "U8": "torch.uint8"}


def bf16(a):
    """bfloat16 bits of float32 values (round to nearest even, as torch does)."""
    bits = a.astype("<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def state_dict():
    rng = np.random.default_rng(7)
    d = {}
    d["model.embed_tokens.weight"] = ("F32", rng.standard_normal((1024, 256)).astype("<f4"))
    for i in range(4):
        p = "model.layers.%d." % i
        d[p + "input_layernorm.weight"] = ("F32", (1 + i / 10 + np.zeros(256)).astype("<f4"))
        d[p + "self_attn.q_proj.weight"] = ("F16", rng.standard_normal((256, 256)).astype("<f2"))
        d[p + "mlp.up_proj.weight"] = ("BF16", bf16(rng.standard_normal((512, 256))))
    d["model.norm.weight"] = ("F32", np.ones(256, "<f4"))
    d["model.rotary.inv_freq_count"] = ("I64", np.arange(8, dtype="<i8"))
    d["lm_head.weight"] = ("F32", rng.standard_normal((1024, 256)).astype("<f4"))
    return d


def split(d, max_shard_size):
    shards, current, size, total = [], {}, 0, 0
    for key, (dtype, a) in d.items():
        n = a.nbytes
        if n > max_shard_size:
            total += n
            shards.append({key: (dtype, a)})
            continue
        if size + n > max_shard_size:
            shards.append(current)
            current, size = {}, 0
        current[key] = (dtype, a)
        size += n
        total += n
    if current:
        shards.append(current)
    return shards, total


def safetensors_bytes(tensors, metadata=None):
    """safetensors.torch.save: {name: (DTYPE, array)} and the string metadata."""
    items = sorted(tensors.items(), key=lambda kv: (-ORDER.index(kv[1][0]), kv[0]))
    header = {"__metadata__": dict(metadata or {"format": "pt"})}
    offset = 0
    for name, (dtype, a) in items:
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return b"".join([struct.pack("<Q", len(text)), text] +
                    [np.ascontiguousarray(a).tobytes() for _, (_, a) in items])


def write_safetensors(path, tensors):
    with open(path, "wb") as f:
        f.write(safetensors_bytes(tensors))


def write_bin(path, tensors):
    import torch
    out = {}
    for name, (dtype, a) in tensors.items():
        a = np.ascontiguousarray(a).copy()
        if dtype == "BF16":  # torch 1.13 takes no uint16 array: the same bits as int16
            out[name] = torch.from_numpy(a.view("<i2")).view(torch.bfloat16)
        else:
            out[name] = torch.from_numpy(a)
    torch.save(out, path)


def write_folder(folder, d, prefix, ext, writer, max_shard_size):
    os.makedirs(folder, exist_ok=True)
    shards, total = split(d, max_shard_size)
    weight_map = {}
    for i, shard in enumerate(shards):
        name = "%s-%05d-of-%05d.%s" % (prefix, i + 1, len(shards), ext)
        writer(os.path.join(folder, name), shard)
        for key in shard:
            weight_map[key] = name
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    index_name = "model.safetensors.index.json" if ext == "safetensors" else \
        "pytorch_model.bin.index.json"
    with open(os.path.join(folder, index_name), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return len(shards)


def main():
    out = sys.argv[1]
    d = state_dict()
    expected = {"tensors": {}, "shards": {}}
    for key, (dtype, a) in d.items():
        expected["tensors"][key] = {
            "dtype": TORCH[dtype], "shape": list(a.shape),
            "sha256": hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}
    expected["shards"]["st"] = write_folder(os.path.join(out, "st"), d, "model", "safetensors",
                                            write_safetensors, 3 << 19)
    if "--skip-bin" not in sys.argv:
        expected["shards"]["bin"] = write_folder(os.path.join(out, "bin"), d, "pytorch_model",
                                                 "bin", write_bin, 3 << 19)
    print(json.dumps(expected))


if __name__ == "__main__":
    main()
