"""Reads what libtensordict wrote with independent tools: Python's zipfile,
pickle and numpy. Prints one JSON report.

usage: verify_output.py PATH
  PATH: a memmap directory or a .tdz archive.
Report: {"zip": {"testzip": null, "entries": [{name, method, payload_offset}]},
         "leaves": {"a/b": {"sha256", "shape", "dtype", "file_size"}},
         "non_tensor": {"a/s": value}, "errors": [...]}
"""
import hashlib
import io
import json
import os
import pickle
import struct
import sys
import tempfile
import zipfile

import numpy as np

NUMPY = {
    "torch.bool": np.bool_, "torch.uint8": np.uint8, "torch.int8": np.int8,
    "torch.int16": np.int16, "torch.int32": np.int32, "torch.int64": np.int64,
    "torch.uint16": np.uint16, "torch.uint32": np.uint32, "torch.uint64": np.uint64,
    "torch.float16": np.float16, "torch.float32": np.float32, "torch.float64": np.float64,
    "torch.complex64": np.complex64, "torch.complex128": np.complex128,
    # no numpy dtype: read as raw integers of the same width
    "torch.bfloat16": np.uint16, "torch.complex32": np.uint32,
    "torch.float8_e4m3fn": np.uint8, "torch.float8_e5m2": np.uint8,
}


def plain(value):
    if isinstance(value, bytes):
        return {"__bytes_hex__": value.hex()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def walk(root, rel, keys, report):
    with open(os.path.join(root, rel, "meta.json"), "rb") as f:
        meta = json.loads(f.read())
    kind = meta.get("_type", "")
    if "NonTensorData" in kind or "MetaData" in kind:
        if "data" in meta:
            report["non_tensor"]["/".join(keys)] = meta["data"]
        else:
            with open(os.path.join(root, rel, "other.pickle"), "rb") as f:
                report["non_tensor"]["/".join(keys)] = plain(pickle.load(f)["data"])
        return
    if "NonTensorStack" in kind:
        data = meta["data"]
        if data == "pickle.pkl":
            with open(os.path.join(root, rel, "pickle.pkl"), "rb") as f:
                data = plain(pickle.load(f))
        report["non_tensor"]["/".join(keys)] = data
        return
    if "LazyStacked" in kind:
        i = 0
        while os.path.isdir(os.path.join(root, rel, str(i))):
            walk(root, os.path.join(rel, str(i)), keys + [str(i)], report)
            i += 1
        return
    if "_td.TensorDict" not in kind:  # a tensorclass
        if os.path.exists(os.path.join(root, rel, "other.pickle")):
            with open(os.path.join(root, rel, "other.pickle"), "rb") as f:
                pickle.load(f)
        walk(root, os.path.join(rel, "_tensordict"), keys, report)
        return
    for key, entry in meta.items():
        if not isinstance(entry, dict):
            continue
        name = key.replace("%", "%25")
        for ch in '/<>:"|?*\\ ':
            name = name.replace(ch, "%%%02X" % ord(ch))
        name = "".join("%%%02X" % ord(c) if ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)
        name = {"": "%", ".": "%2E", "..": "%2E%2E"}.get(key, name)
        if not os.path.exists(os.path.join(root, rel, name + ".memmap")) and not os.path.isdir(os.path.join(root, rel, name)):
            name = key  # written with robust_key=False
        if "type" in entry:
            walk(root, os.path.join(rel, name), keys + [key], report)
            continue
        dtype = NUMPY[entry["dtype"]]
        shape = entry["shape"]
        count = int(np.prod(shape)) if shape else 1
        path = os.path.join(root, rel, name + ".memmap")
        if count == 0:
            array = np.empty(shape, dtype=dtype)
            size = None
        else:
            array = np.fromfile(path, dtype=dtype, count=count).reshape(shape)
            size = os.path.getsize(path)
        report["leaves"]["/".join(keys + [key])] = {
            "sha256": hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest(),
            "shape": list(array.shape),
            "dtype": entry["dtype"],
            "file_size": size,
        }


def main():
    path = sys.argv[1]
    report = {"leaves": {}, "non_tensor": {}}
    if os.path.isfile(path):
        with open(path, "rb") as f:
            raw = f.read()
        with zipfile.ZipFile(path) as zf:
            entries = []
            for info in zf.infolist():
                name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
                entries.append({
                    "name": info.filename,
                    "method": info.compress_type,
                    "payload_offset": info.header_offset + 30 + name_len + extra_len,
                })
            report["zip"] = {"testzip": zf.testzip(), "entries": entries}
            with tempfile.TemporaryDirectory() as tmp:
                zf.extractall(tmp)
                walk(tmp, "", [], report)
    else:
        walk(path, "", [], report)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
