"""Packs a memmap directory into a zip with Python's own zipfile module.

An independent zip writer for the tests: what it writes, tdstudio must read.
usage: pack_zip.py SRC_DIR DEST.zip METHOD   (METHOD: stored, deflate, bzip2, lzma)
"""
import os
import sys
import zipfile

METHODS = {
    "stored": zipfile.ZIP_STORED,
    "deflate": zipfile.ZIP_DEFLATED,
    "bzip2": zipfile.ZIP_BZIP2,
    "lzma": zipfile.ZIP_LZMA,
}


def main():
    src, dest, method = sys.argv[1], sys.argv[2], METHODS[sys.argv[3]]
    with zipfile.ZipFile(dest, "w", allowZip64=True) as zf:
        for root, dirs, files in os.walk(src):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                arc = os.path.relpath(path, src).replace(os.sep, "/")
                # meta.json stays stored, as tensordict writes it.
                zf.write(path, arc, compress_type=zipfile.ZIP_STORED if name == "meta.json" else method)


if __name__ == "__main__":
    main()
