"""Writes hostile archives for the bad-input tests with Python's zipfile.

usage: make_bad_zips.py OUT_DIR
"""
import os
import sys
import zipfile

META = (b'{"a": {"device": "cpu", "shape": [2], "dtype": "torch.float32", "is_nested": false}, '
        b'"shape": [], "device": "cpu", "_type": "<class \'tensordict._td.TensorDict\'>"}')
DATA = bytes(8)


def write(path, entries):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zf.writestr(zipfile.ZipInfo(name), data)


out = sys.argv[1]
write(os.path.join(out, "dotdot.tdz"), [("meta.json", META), ("../a.memmap", DATA)])
write(os.path.join(out, "absolute.tdz"), [("meta.json", META), ("/etc/a.memmap", DATA)])
write(os.path.join(out, "nometa.tdz"), [("a.memmap", DATA)])
# A deflated leaf whose compressed bytes are then damaged.
with zipfile.ZipFile(os.path.join(out, "corrupt.tdz"), "w") as zf:
    zf.writestr("meta.json", META)
    zf.writestr("a.memmap", bytes(range(8)) * 1, compress_type=zipfile.ZIP_DEFLATED)
with open(os.path.join(out, "corrupt.tdz"), "r+b") as f:
    data = bytearray(f.read())
    with zipfile.ZipFile(os.path.join(out, "corrupt.tdz")) as zf:
        info = zf.getinfo("a.memmap")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start, start + info.compress_size):
        data[i] ^= 0x5A
    f.seek(0)
    f.write(data)
