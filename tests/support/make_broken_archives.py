"""Damaged tensordict archives for tst_check, made with Python's own zipfile
(an independent writer) and patched byte by byte where zipfile would refuse.

usage: make_broken_archives.py OUT_DIR GOOD_DIR
  GOOD_DIR: a memmap directory (meta.json, a.memmap, b.memmap) to pack.
Writes into OUT_DIR:
  short_entry.tdz   a.memmap shorter than its shape needs, with a consistent CRC
  local_header.tdz  a.memmap's local header names another CRC than the directory
  descriptor.tdz    entries with data descriptors (flag bit 3); a.memmap's is wrong
  overlap.tdz       an extra entry whose bytes lie inside a.memmap's (a zip bomb's trick)
"""
import io
import os
import struct
import sys
import zipfile

out, good = sys.argv[1], sys.argv[2]
names = ["meta.json", "a.memmap", "b.memmap"]
files = {n: open(os.path.join(good, n), "rb").read() for n in names}


def pack(path, contents, stream=False):
    if stream:
        # An unseekable output: zipfile writes data descriptors after each entry.
        class Unseekable(io.RawIOBase):
            def __init__(self):
                self.buf = bytearray()
            def writable(self):
                return True
            def write(self, b):
                self.buf += b
                return len(b)
        sink = Unseekable()
        with zipfile.ZipFile(sink, "w", zipfile.ZIP_STORED) as z:
            for n, data in contents.items():
                with z.open(n, "w") as f:
                    f.write(data)
        open(path, "wb").write(bytes(sink.buf))
        return
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for n, data in contents.items():
            z.writestr(n, data)


def info(path, name):
    with zipfile.ZipFile(path) as z:
        return z.getinfo(name)


# A short entry: its CRC matches its (truncated) data.
short = dict(files)
short["a.memmap"] = files["a.memmap"][:-4]
pack(os.path.join(out, "short_entry.tdz"), short)

# The local header's CRC field disagrees with the central directory's.
path = os.path.join(out, "local_header.tdz")
pack(path, files)
raw = bytearray(open(path, "rb").read())
at = info(path, "a.memmap").header_offset
raw[at + 14:at + 18] = struct.pack("<I", 0xDEADBEEF)
open(path, "wb").write(raw)

# Data descriptors, a.memmap's CRC wrong in its descriptor only.
path = os.path.join(out, "descriptor.tdz")
pack(path, files, stream=True)
raw = bytearray(open(path, "rb").read())
i = info(path, "a.memmap")
assert i.flag_bits & 0x08
end = i.header_offset + 30 + len(i.filename) + len(i.extra) + i.compress_size
# zipfile's descriptor: signature, CRC, sizes
assert raw[end:end + 4] == b"PK\x07\x08"
raw[end + 4:end + 8] = struct.pack("<I", i.CRC ^ 1)
open(path, "wb").write(raw)

# Overlap: a.memmap's payload holds a whole local record for "c.memmap",
# which a second central entry points into.
inner_data = b"\x00" * 8
inner = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0,
                    zipfile.crc32(inner_data), len(inner_data), len(inner_data),
                    len(b"c.memmap"), 0) + b"c.memmap" + inner_data
bomb = dict(files)
bomb["a.memmap"] = inner + files["a.memmap"]
path = os.path.join(out, "overlap.tdz")
pack(path, bomb)
raw = bytearray(open(path, "rb").read())
a = info(path, "a.memmap")
payload = a.header_offset + 30 + len(a.filename) + len(a.extra)
# Append a central record for c.memmap pointing at the record inside a.memmap.
eocd = raw.rfind(b"PK\x05\x06")
count, cd_size, cd_offset = struct.unpack("<HII", raw[eocd + 10:eocd + 20])
central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0,
                      zipfile.crc32(inner_data), len(inner_data), len(inner_data),
                      len(b"c.memmap"), 0, 0, 0, 0, 0o644 << 16, payload) + b"c.memmap"
raw[eocd:eocd] = central
eocd += len(central)
raw[eocd + 8:eocd + 20] = struct.pack("<HHII", count + 1, count + 1, cd_size + len(central),
                                      cd_offset)
open(path, "wb").write(raw)
