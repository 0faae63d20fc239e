#!/usr/bin/env python3
"""Serializes a directory tree into the input format of fuzz_load_directory.

usage: pack_directory.py DIR OUT

Records, in sorted path order (a directory before what it holds), each
[u8 kind][u16 pathLen][path][u32 dataLen][data], little-endian: kind 0 a
regular file (data: its contents), 1 a directory (no data), 2 a symbolic link
(data: its target). Paths are relative to DIR, joined by '/'. The format is
specified at the top of fuzz_load_directory.cpp.
"""

import os
import struct
import sys

FILE, DIRECTORY, SYMLINK = 0, 1, 2


def record(kind, path, data=b""):
    name = os.fsencode(path)
    return struct.pack("<BH", kind, len(name)) + name + struct.pack("<I", len(data)) + data


def pack(root):
    out = bytearray()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                out += record(SYMLINK, prefix + name, os.fsencode(os.readlink(full)))
                if name in dirnames:
                    dirnames.remove(name)  # os.walk does not descend into links anyway
            elif os.path.isdir(full):
                out += record(DIRECTORY, prefix + name)
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    out += record(FILE, prefix + name, f.read())
    return bytes(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    data = pack(sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
