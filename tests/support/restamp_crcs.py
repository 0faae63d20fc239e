"""An independent re-stamp of an archive's CRC-32s, as tensordict's
refresh_archive_checksums() does: each stored entry's CRC recomputed from
its data and written into its local header and its central directory record;
every other byte kept.

usage: restamp_crcs.py IN OUT
"""
import struct
import sys
import zipfile

src, dst = sys.argv[1], sys.argv[2]
raw = bytearray(open(src, "rb").read())
with zipfile.ZipFile(src) as z:
    infos = z.infolist()
eocd = raw.rfind(b"PK\x05\x06")
cd_offset = struct.unpack("<I", raw[eocd + 16:eocd + 20])[0]
at = cd_offset
for i in infos:
    assert raw[at:at + 4] == b"PK\x01\x02"
    name_len, extra_len, comment_len = struct.unpack("<HHH", raw[at + 28:at + 34])
    h = i.header_offset
    local_name, local_extra = struct.unpack("<HH", raw[h + 26:h + 30])
    payload = h + 30 + local_name + local_extra
    if i.compress_type == zipfile.ZIP_STORED:
        crc = zipfile.crc32(bytes(raw[payload:payload + i.compress_size]))
        raw[h + 14:h + 18] = struct.pack("<I", crc)
        raw[at + 16:at + 20] = struct.pack("<I", crc)
    at += 46 + name_len + extra_len + comment_len
open(dst, "wb").write(raw)
