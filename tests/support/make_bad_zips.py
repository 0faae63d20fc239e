"""Writes hostile archives for the bad-input tests with Python's zipfile.

usage: make_bad_zips.py OUT_DIR
"""
import os
import struct
import sys
import zipfile
import zlib

META = (b'{"a": {"device": "cpu", "shape": [2], "dtype": "torch.float32", "is_nested": false}, '
        b'"shape": [], "device": "cpu", "_type": "<class \'tensordict._td.TensorDict\'>"}')
DATA = bytes(8)


def write(path, entries):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zf.writestr(zipfile.ZipInfo(name), data)


def _crc_byte(crc, byte):
    return zlib.crc32(bytes([byte]), crc ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def zipcrypto(data, password, check_byte):
    """PKWARE traditional encryption (APPNOTE 6.1), as `zip -P` writes it:
    a 12-byte header whose last byte is the CRC's high byte, then the data."""
    keys = [0x12345678, 0x23456789, 0x34567890]

    def update(byte):
        keys[0] = _crc_byte(keys[0], byte)
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = _crc_byte(keys[2], keys[1] >> 24)

    def stream_byte():
        t = (keys[2] | 2) & 0xFFFF
        return ((t * (t ^ 1)) >> 8) & 0xFF

    for byte in password:
        update(byte)
    out = bytearray()
    for byte in bytes(range(1, 12)) + bytes([check_byte]) + data:
        out.append(byte ^ stream_byte())
        update(byte)
    return bytes(out)


def write_encrypted(path, entries, password):
    """A zip whose stored entries are all encrypted (general purpose bit 0).
    Python's zipfile cannot write encryption, and Info-ZIP's zip may not be
    installed: written here, then checked by decrypting it with zipfile."""
    local, central = bytearray(), bytearray()
    for name, data in entries:
        crc = zlib.crc32(data)
        payload = zipcrypto(data, password, crc >> 24)
        fields = struct.pack("<HHHHHIIIHH", 20, 0x0001, 0, 0, 0x21, crc, len(payload),
                             len(data), len(name), 0)
        central += struct.pack("<I", 0x02014B50) + struct.pack("<H", 20) + fields + \
            struct.pack("<HHHII", 0, 0, 0, 0, len(local)) + name.encode()
        local += struct.pack("<I", 0x04034B50) + fields + name.encode() + payload
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central),
                       len(local), 0)
    with open(path, "wb") as f:
        f.write(bytes(local + central + eocd))
    with zipfile.ZipFile(path) as zf:
        for (name, data), info in zip(entries, zf.infolist()):
            assert info.flag_bits & 0x1, f"{path}:{name} is not marked encrypted"
            assert zf.read(name, pwd=password) == data, f"{path}:{name} does not decrypt"
            try:
                zf.read(name)
                raise AssertionError(f"{path}:{name} reads without the password")
            except RuntimeError:
                pass


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
# Every entry encrypted, as `zip -P secret` writes it.
write_encrypted(os.path.join(out, "encrypted.tdz"), [("meta.json", META), ("a.memmap", DATA)],
                b"secret")
