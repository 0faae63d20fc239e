#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets, tests/fuzz/corpus/<target>/,
from the fixtures of tests/fixtures/tensordict-0.14 (python3 stdlib only).

usage: make_corpora.py [--tdstudio PATH]

  json            every fixture meta.json, two .expected.json files, a few
                  documents with NaN / Infinity / escapes in both writer styles
  pickle          the fixtures' pickle sidecars and pickle.dumps of plain data
                  (protocols 2 to 5), one pickle that imports a class
  zip,            archive_simple.tdz; fixture directories zipped by zipfile
  load_archive    with every method (stored, deflate, bzip2, lzma); one with
                  ZIP64 end records and extra fields; one with a prepended
                  stub and a comment; with --tdstudio, archives written by our
                  own writer (64-byte aligned payloads, padding extra fields)
  load_directory  every fixture directory, packed by pack_directory.py; a
                  Hugging Face sharded folder (index and two safetensors
                  shards); with /usr/bin/python3's torch, distributed
                  checkpoints of tests/support/make_dcp.py (sound, damaged,
                  hostile), whose .metadata pickles seed pickle too, and the
                  replay buffer dumps and the stack of make_replay.py
  load_file       every file of tests/fixtures/pytorch-1.13 (checkpoints, zip
                  and legacy; safetensors; .npy; .npz), and .npy variants
                  (version 2.0, big-endian, Fortran order, 0-d, empty); with
                  /usr/bin/python3's torch, checkpoints of quantized tensors
                  (tests/support/make_quantized.py: both layouts, and 3
                  scales for 4 channels)
  torch_pickle    the data.pkl of every checkpoint fixture and of the
                  quantized one, and the legacy checkpoint's pickles
  dcp_stream      with /usr/bin/python3's torch, chunk and byte item streams
                  of make_dcp.py's checkpoints: plain, zstd, zstd over rot13,
                  and safetensors data
  deflate_blocks  raw deflate streams by zlib (stored, fixed and dynamic
                  blocks, sync flushes, one primed with a dictionary), and
                  text for the target to compress with libdeflate and zlib

The corpora are rewritten from scratch; regressions/ is never touched.
"""

import argparse
import io
import math
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures", "tensordict-0.14"))
TORCH_FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures", "pytorch-1.13"))
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, HERE)
import pack_directory  # noqa: E402


def fixture_dirs():
    return sorted(d for d in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, d)))


def write(target, name, data):
    path = os.path.join(CORPUS, target, name)
    with open(path, "wb") as f:
        f.write(data)


def json_corpus():
    seen = set()
    for fixture in fixture_dirs():
        root = os.path.join(FIXTURES, fixture)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            if "meta.json" not in filenames:
                continue
            with open(os.path.join(dirpath, "meta.json"), "rb") as f:
                data = f.read()
            if data in seen:
                continue
            seen.add(data)
            rel = os.path.relpath(dirpath, root)
            name = fixture + ("" if rel == "." else "_" + rel) + "_meta.json"
            write("json", "".join(c if c.isalnum() or c in "._-" else "_" for c in name), data)
    for name in ("simple", "dtypes"):
        with open(os.path.join(FIXTURES, name + ".expected.json"), "rb") as f:
            write("json", name + ".expected.json", f.read())
    doc = {
        "_type": "<class 'tensordict.tensorclass.NonTensorData'>",
        "data": [math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324, 2**63 - 1, -(2**63), 2**64],
        "text": "caf\u00e9 \U0001F600 \"quoted\" \\ \t\n\u0000",
        "nested": {"a": [[], {}, [None, True, False]], "": ""},
        "shape": [3, 4], "device": "cpu", "dtype": "torch.float32", "batch_size": [],
    }
    import json
    write("json", "python_style.json", json.dumps(doc).encode())
    write("json", "compact_utf8.json",
          json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode())
    write("json", "pretty.json", json.dumps(doc, indent=4).encode())
    write("json", "deep.json", b"[" * 100 + b"]" * 100)
    write("json", "surrogates.json", b'["\\ud83d\\ude00", "\\u00e9", "\\ud800"]')


class Opaque:  # pickled by reference: a GLOBAL / STACK_GLOBAL opcode
    pass


def pickle_corpus():
    for dirpath, _, filenames in os.walk(FIXTURES):
        for name in sorted(filenames):
            if name.endswith((".pickle", ".pkl")):
                with open(os.path.join(dirpath, name), "rb") as f:
                    rel = os.path.relpath(os.path.join(dirpath, name), FIXTURES)
                    write("pickle", rel.replace(os.sep, "_"), f.read())
    shared = "shared string"
    values = {
        "scalars": [None, True, False, 0, 255, 256, 65535, 65536, -1, 2**31, -(2**31) - 1,
                    2**63 - 1, -(2**63), 1.5, -0.0, math.nan, math.inf, -math.inf],
        "nested": {"a": [1, (2, 3), {"b": [b"bytes", bytearray(b"ba")]}], "t": (), "e": []},
        "strings": ["", "ascii", "caf\u00e9", "\U0001F600", "x" * 300, b"y" * 300],
        "sets": [{1, 2, 3}, frozenset({"a"}), set()],
        "memo": [shared, shared, (shared,)],
        "tuples": [(1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
        "big_int": 2**70,
        "deep": [[[[[[[[["deep"]]]]]]]]],
    }
    for name, value in values.items():
        for protocol in (2, 3, 4, 5):
            write("pickle", f"{name}_p{protocol}.pkl", pickle.dumps(value, protocol=protocol))
    write("pickle", "text_protocol0.pkl", pickle.dumps([1, "a", 2.5, None], protocol=0))
    shared_list = [1, 2]
    write("pickle", "shared_list_p4.pkl", pickle.dumps([shared_list, shared_list], protocol=4))
    Opaque.__module__ = "fixture_classes"
    sys.modules["fixture_classes"] = sys.modules[__name__]
    write("pickle", "global_p4.pkl", pickle.dumps(Opaque(), protocol=4))


def zip_directory(root, method, comment=b""):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as z:
        z.comment = comment
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                z.write(full, os.path.relpath(full, root).replace(os.sep, "/"))
    return out.getvalue()


def zip64_directory(root):
    # zipfile switches to ZIP64 fields and end records past these limits:
    # lowered, a tiny archive carries every ZIP64 structure.
    saved = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 8, 1
    try:
        return zip_directory(root, zipfile.ZIP_DEFLATED)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved


def archive_corpus(tdstudio):
    archives = {}
    with open(os.path.join(FIXTURES, "archive_simple.tdz"), "rb") as f:
        archives["archive_simple.tdz"] = f.read()
    methods = {"stored": zipfile.ZIP_STORED, "deflate": zipfile.ZIP_DEFLATED,
               "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}
    for method, code in methods.items():
        archives[f"simple_{method}.tdz"] = zip_directory(os.path.join(FIXTURES, "simple"), code)
    for fixture, method in (("nontensor_pickle", "deflate"), ("lazy_stack", "lzma"),
                            ("tensorclass_nested", "bzip2"), ("nontensor_stack", "stored"),
                            ("dtypes", "deflate"), ("robust_keys", "stored")):
        archives[f"{fixture}_{method}.tdz"] = zip_directory(os.path.join(FIXTURES, fixture),
                                                            methods[method])
    archives["nested3_zip64.tdz"] = zip64_directory(os.path.join(FIXTURES, "nested3"))
    # Offsets not shifted by the stub: readers must account for prepended bytes.
    archives["scalar0d_stub_comment.tdz"] = b"#!/bin/sh\nexit 0\n" + zip_directory(
        os.path.join(FIXTURES, "scalar0d"), zipfile.ZIP_DEFLATED,
        comment=b"prepended stub and a comment")
    if tdstudio:
        with tempfile.TemporaryDirectory() as tmp:
            for fixture, method in (("simple", "stored"), ("batch_4x2", "deflate"),
                                    ("nontensor_string", "bzip2"), ("tensorclass", "lzma")):
                dest = os.path.join(tmp, f"{fixture}_{method}.tdz")
                subprocess.run([tdstudio, "--save", os.path.join(FIXTURES, fixture), dest,
                                "--archive", "--compression", method], check=True,
                               stderr=subprocess.DEVNULL,
                               env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
                with open(dest, "rb") as f:
                    archives[f"tdstudio_{fixture}_{method}.tdz"] = f.read()
    for name, data in archives.items():
        write("zip", name, data)
        write("load_archive", name, data)


def directory_corpus():
    for fixture in fixture_dirs():
        write("load_directory", fixture + ".dir",
              pack_directory.pack(os.path.join(FIXTURES, fixture)))


def safetensors_file(tensors):
    """A safetensors file of {name: (dtype, shape, bytes)}, as the library lays it out."""
    import json
    import struct
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(d for _, _, d in tensors.values())


def multi_file_corpus():
    import json
    import struct
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "sharded")
        os.makedirs(folder)
        shards = {
            "model-00001-of-00002.safetensors": {
                "embed.weight": ("F32", [2, 3], struct.pack("<6f", *range(6))),
                "norm.weight": ("BF16", [2], b"\x80\x3f\x00\x40")},
            "model-00002-of-00002.safetensors": {
                "head.weight": ("F16", [3], b"\x00\x3c\x00\x40\x00\x42")},
        }
        weight_map = {}
        for name, tensors in shards.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(safetensors_file(tensors))
            weight_map.update({t: name for t in tensors})
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            f.write(json.dumps({"metadata": {"total_size": 42}, "weight_map": weight_map},
                               indent=2, sort_keys=True) + "\n")
        write("load_directory", "sharded.dir", pack_directory.pack(folder))

        torch_python = "/usr/bin/python3"
        make_dcp = os.path.join(HERE, "..", "support", "make_dcp.py")
        dcp = os.path.join(tmp, "dcp")
        made = subprocess.run([torch_python, make_dcp, dcp, "--marker", os.path.join(tmp, "m")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if made.returncode != 0:
            print("no torch at %s: distributed checkpoints left out" % torch_python)
            return
        for name in ("one_rank", "four_ranks", "legacy_v23", "torch27", "gap", "overlap",
                     "missing_distcp", "bad_crc", "hostile", "hostile_getattr", "safetensors",
                     "four_ranks_safetensors"):
            write("load_directory", "dcp_%s.dir" % name, pack_directory.pack(os.path.join(dcp, name)))
        for name in ("four_ranks", "legacy_v23", "hostile_getattr"):
            with open(os.path.join(dcp, name, ".metadata"), "rb") as f:
                write("pickle", "dcp_%s.metadata" % name, f.read())
        dcp_metadata_corpus(dcp)
        dcp_stream_corpus(dcp, json.loads(made.stdout)["fixtures"])

        # TorchRL replay buffer dumps (each sampler and writer layout, wrapped,
        # partial, with a disagreeing writer) and a stack of chunks.
        replay = os.path.join(tmp, "replay")
        make_replay = os.path.join(HERE, "..", "support", "make_replay.py")
        subprocess.run([torch_python, make_replay, replay], stdout=subprocess.DEVNULL, check=True)
        for name in sorted(os.listdir(replay)):
            write("load_directory", "replay_%s.dir" % name,
                  pack_directory.pack(os.path.join(replay, name)))


def sharded_index_corpus():
    """Indexes over fuzz_sharded_index's two fixed shards: sound, and lying."""
    import json
    sound = {"embed.weight": "model-00001-of-00002.safetensors",
             "norm.weight": "model-00001-of-00002.safetensors",
             "head.weight": "model-00002-of-00002.safetensors"}

    def index(weight_map, total=42, **extra):
        doc = {"metadata": {"total_size": total}, "weight_map": weight_map}
        doc.update(extra)
        return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    write("sharded_index", "sound.json", index(sound))
    write("sharded_index", "wrong_total.json", index(sound, total=7))
    write("sharded_index", "missing_shard.json",
          index(dict(sound, **{"head.weight": "model-00003-of-00003.safetensors"})))
    write("sharded_index", "not_in_shard.json",
          index(dict(sound, **{"lm_head.weight": "model-00002-of-00002.safetensors"})))
    write("sharded_index", "path_out.json", index(dict(sound, **{"head.weight": "../x"})))
    write("sharded_index", "one_shard_unnamed.json",
          index({k: v for k, v in sound.items() if k != "head.weight"}))


def dcp_metadata_corpus(dcp):
    """The .metadata of every generated distributed checkpoint."""
    for name in sorted(os.listdir(dcp)):
        path = os.path.join(dcp, name, ".metadata")
        if os.path.exists(path):
            with open(path, "rb") as f:
                write("dcp_metadata", "%s.metadata" % name, f.read())


# How fuzz_dcp_stream's first byte says a stream was written.
STREAM_HOW = {(): 0, ("stream.zstd/1",): 1, ("stream.zstd/1", "stream.rot13/1"): 3}
SAFETENSORS_DATA = 7


def dcp_stream_corpus(dcp, fixtures):
    """Streams of the generated checkpoints as fuzz_dcp_stream takes them:
    a byte for how each was written, then its bytes (for a chunk in
    safetensors data: the file from where the data starts)."""
    for name in ("one_rank", "torch27", "zstd", "zstd_raw", "zstd_rot13", "four_ranks_zstd",
                 "safetensors", "four_ranks_safetensors"):
        fixture = fixtures[name]
        places = []
        for tensor in sorted(fixture["tensors"])[:3]:
            for chunk in fixture["tensors"][tensor]["chunks"][:1]:
                how = SAFETENSORS_DATA if chunk.get("serialization") == "safetensors" else \
                    STREAM_HOW[tuple(chunk.get("transform_descriptors", ()))]
                places.append((tensor, how, chunk))
        stream_how = STREAM_HOW[tuple(next(
            (c.get("transform_descriptors", ()) for t in fixture["tensors"].values()
             for c in t["chunks"]), ()))]
        for item in sorted(fixture["bytes"])[:2]:
            places.append((item, stream_how, fixture["bytes"][item]))
        for key, how, place in places:
            with open(os.path.join(dcp, name, place["file"]), "rb") as f:
                f.seek(place["offset"])
                data = f.read() if how == SAFETENSORS_DATA else f.read(place["length"])
            write("dcp_stream", "%s_%s" % (name, key), bytes([how]) + data)


def consolidated_corpus():
    """The real library's consolidated files, as fuzz_consolidated takes them:
    u64 data length, the leaves' bytes, the JSON (the trailer is added back)."""
    import struct
    torch_fixtures = os.path.join(HERE, "..", "fixtures", "pytorch-1.13")
    file_seeds = os.path.join(HERE, "corpus", "load_file")  # file_corpus()'s, written first
    paths = [os.path.join(d, n) for d in (torch_fixtures, file_seeds)
             for n in sorted(os.listdir(d)) if n.endswith(".td")]
    for path in paths:
        name = os.path.basename(path)
        with open(path, "rb") as f:
            blob = f.read()
        (json_len,) = struct.unpack("<Q", blob[-8:])
        data_len = len(blob) - 8 - json_len
        write("consolidated", name, struct.pack("<Q", data_len) + blob[:-8])


def npy(descr, shape, data, fortran=False, version=(1, 0)):
    """A .npy file as numpy writes it (header padded to 64 bytes), without numpy.
    A descr that is a list (a structured dtype) is written as its literal."""
    header = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith("[") else "'%s'" % descr, fortran, "(%s)" % "".join("%d, " % d for d in shape).rstrip(" ")
        if len(shape) != 1 else "(%d,)" % shape[0])
    size_bytes = 2 if version[0] == 1 else 4
    pad = 64 - (6 + 2 + size_bytes + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    return (b"\x93NUMPY" + bytes(version) + len(header).to_bytes(size_bytes, "little") +
            header.encode("latin-1") + data)


def file_corpus():
    for name in sorted(os.listdir(TORCH_FIXTURES)):
        if name.endswith((".pt", ".npy", ".npz", ".safetensors", ".td")):
            with open(os.path.join(TORCH_FIXTURES, name), "rb") as f:
                write("load_file", name, f.read())
    import struct
    values = struct.pack("<6f", *range(6))
    write("load_file", "v2.npy", npy("<f4", (2, 3), values, version=(2, 0)))
    write("load_file", "big_endian.npy", npy(">f4", (2, 3), struct.pack(">6f", *range(6))))
    write("load_file", "fortran.npy", npy("<f4", (2, 3), values, fortran=True))
    write("load_file", "scalar.npy", npy("<i8", (), struct.pack("<q", 7)))
    write("load_file", "empty.npy", npy("<f8", (0, 4), b""))
    write("load_file", "complex_be.npy", npy(">c8", (2,), struct.pack(">4f", 1, 2, 3, 4)))
    # Codes NumPy reads: a one-letter one, and kinds tdstudio does not decode.
    write("load_file", "one_letter.npy", npy("<d", (3,), struct.pack("<3d", 1, 2, 3)))
    write("load_file", "strings.npy", npy("<U3", (2,), "abcdef".encode("utf-32-le")))
    write("load_file", "datetimes.npy", npy("<M8[ns]", (2,), struct.pack("<2q", 1, 2)))
    write("load_file", "records.npy",
          npy("[('a', '<f4'), (('title', 'b'), [('c', '<i8')], (2,)), ('', '|V4')]", (2,),
              bytes(2 * 24)))


def checkpoint_corpus(script, prefix, files, pickles):
    """Checkpoints a tests/support script writes with /usr/bin/python3's torch:
    `files` for load_file, and the pickles of `pickles` for torch_pickle, each
    named with `prefix`."""
    with tempfile.TemporaryDirectory() as tmp:
        made = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "support", script),
                               tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if made.returncode != 0:
            print("no torch at /usr/bin/python3: %s's checkpoints left out" % script)
            return
        for name in files:
            with open(os.path.join(tmp, name), "rb") as f:
                write("load_file", prefix + name, f.read())
        for name, pickle_name in pickles:
            with zipfile.ZipFile(os.path.join(tmp, name)) as z:
                write("torch_pickle", pickle_name, z.read(name[:-3] + "/data.pkl"))


def quantized_corpus():
    """Checkpoints of quantized tensors, both layouts (tests/support/make_quantized.py)."""
    checkpoint_corpus("make_quantized.py", "quantized_",
                      ("state.pt", "state_legacy.pt", "few_scales.pt"),
                      [("state.pt", "quantized.pkl")])


def object_pickles_corpus():
    """Checkpoints whose tensors sit in Python objects (an optimizer's defaultdict,
    list and dict subclasses at protocol 1, an OrderedDict's attribute, tensor
    subclasses, NumPy arrays, a scheduler's loop; tests/support/make_object_pickles.py)."""
    names = ("optimizer.pt", "subclasses_p1.pt", "attribute.pt", "tensor_subclass.pt",
             "numpy_arrays.pt", "scheduler.pt")
    checkpoint_corpus("make_object_pickles.py", "objects_", names,
                      [(name, "objects_" + name[:-3] + ".pkl") for name in names])


def torch_pickle_corpus():
    for name in sorted(os.listdir(TORCH_FIXTURES)):
        if not name.endswith(".pt"):
            continue
        path = os.path.join(TORCH_FIXTURES, name)
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                for entry in z.namelist():
                    if entry.endswith("data.pkl"):
                        write("torch_pickle", name[:-3] + ".pkl", z.read(entry))
        else:  # the legacy layout: its pickles one after another
            with open(path, "rb") as f:
                data = f.read()
            import pickletools
            pos, index = 0, 0
            stream = io.BytesIO(data)
            for index in range(5):
                start = stream.tell()
                for _ in pickletools.genops(stream):
                    pass
                write("torch_pickle", "%s_%d.pkl" % (name[:-3], index),
                      data[start:stream.tell()])


def deflate_blocks_corpus():
    import struct
    import zlib
    text = b"".join(b"%d squared is %d; " % (i, i * i) for i in range(900))
    image = bytes((x % 192 + y * 3 + (x * y) % 5) & 0xFF for y in range(40) for x in range(192))
    noise = bytes((i * 2654435761 >> 13) & 0xFF for i in range(3000))

    def stream(data, level, strategy=zlib.Z_DEFAULT_STRATEGY, every=0, zdict=None):
        c = (zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy, zdict) if zdict
             else zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy))
        out, at = b"", 0
        while every and at + every < len(data):
            out += c.compress(data[at:at + every]) + c.flush(zlib.Z_SYNC_FLUSH)
            at += every
        return out + c.compress(data[at:]) + c.flush(zlib.Z_FINISH)

    seeds = {
        "text_level6": (text, stream(text, 6)),
        "text_level1_flushes": (text, stream(text, 1, every=2000)),
        "image_fixed": (image, stream(image, 6, zlib.Z_FIXED)),
        "image_rle": (image, stream(image, 9, zlib.Z_RLE)),
        "noise_stored": (noise, stream(noise, 0, every=1000)),
        "text_primed": (text, stream(text, 6, zdict=text[-4096:])),
        "empty": (b"", stream(b"", 6)),
    }
    for name, (data, deflated) in seeds.items():
        write("deflate_blocks", name, b"\x00" + struct.pack("<I", len(data)) + deflated)
    # Streams the target makes itself, each bit flipped twice (so none is):
    # libdeflate 1, 6 and 12, zlib 9, zlib with the fixed codes.
    for maker in (1, 6, 12, 22, 23):
        flips = struct.pack("<4H", 5, 5, 77, 77)
        write("deflate_blocks", f"made_{maker}", b"\x01" + bytes([maker]) + flips + text[:3000])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tdstudio", help="a tdstudio executable, to add archives it writes")
    args = parser.parse_args()
    for target in ("json", "pickle", "zip", "load_archive", "load_directory", "load_file",
                   "torch_pickle", "sharded_index", "dcp_metadata", "dcp_stream", "consolidated", "deflate_blocks"):
        shutil.rmtree(os.path.join(CORPUS, target), ignore_errors=True)
        os.makedirs(os.path.join(CORPUS, target))
    json_corpus()
    pickle_corpus()
    archive_corpus(args.tdstudio)
    directory_corpus()
    multi_file_corpus()
    sharded_index_corpus()
    file_corpus()
    quantized_corpus()
    object_pickles_corpus()
    consolidated_corpus()
    torch_pickle_corpus()
    deflate_blocks_corpus()
    total = sum(os.path.getsize(os.path.join(d, f))
                for d, _, files in os.walk(CORPUS) for f in files)
    print(f"corpora: {total} bytes")


if __name__ == "__main__":
    main()
