#!/usr/bin/python3
"""Writes the data of bench_scale, and runs its Python baselines.

usage:
  make_scale.py sharded DIR [SHARDS TENSORS]  48 safetensors shards, 72,000 tensors
                 (headers as the safetensors library writes them, data sparse:
                 ftruncate), and model.safetensors.index.json
  make_scale.py metadata DIR [CHUNKS]         a DCP .metadata of 100,000 chunks
                 (1,000 tensors of 100 chunks), by tests/support/make_dcp.py's
                 classes; the .distcp files it names are not written
  make_scale.py dcp DIR RANKS MIB             one float32 tensor of MIB MiB sharded
                 row-wise over RANKS ranks, by make_dcp.py's dcp_save
  make_scale.py float8 FILE MIB               one F8_E4M3 tensor of MIB MiB in a
                 .safetensors file (codes of weights: normal around 0, a few NaN)
  make_scale.py read-sharded DIR              the baseline: json-parse the index and
                 read each shard's header (struct + json); prints bytes read
  make_scale.py load-metadata FILE            the baseline: pickle.load with the
                 stand-in classes
"""
import json
import os
import pickle
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))


def sharded(out, shards=48, tensors=72000):
    os.makedirs(out, exist_ok=True)
    per = tensors // shards
    weight_map, total = {}, 0
    for s in range(shards):
        name = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        header, offset = {"__metadata__": {"format": "pt"}}, 0
        names = sorted("model.layers.%d.block.%d.weight" % (s, i) for i in range(per))
        for t in names:
            n = 64 * 32 * 2
            header[t] = {"dtype": "BF16", "shape": [64, 32], "data_offsets": [offset, offset + n]}
            offset += n
            weight_map[t] = name
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * ((8 - len(text) % 8) % 8)
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            f.truncate(8 + len(text) + offset)
        total += offset
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map},
                           indent=2, sort_keys=True) + "\n")


def metadata(out, chunks=100000):
    import make_dcp as d
    os.makedirs(out, exist_ok=True)
    per, tensors = 100, chunks // 100
    sdm, storage, planner = {}, {}, {}
    for t in range(tensors):
        fqn = "model.layers.%d.mlp.weight" % t
        props = d.TensorProperties(dtype=d.torch.bfloat16)
        cs = [d.ChunkStorageMetadata(offsets=d._size([c * 8, 0]), sizes=d._size([8, 64]))
              for c in range(per)]
        sdm[fqn] = d.TensorStorageMetadata(props, d._size([8 * per, 64]), cs)
        planner[fqn] = ("model", "layers.%d.mlp.weight" % t)
        for c in range(per):
            storage[d.MetadataIndex(fqn, [c * 8, 0], c)] = d.StorageInfo(
                "__%d_0.distcp" % c, t * 2000, 2000)
    meta = d.Metadata(sdm, planner, storage)
    with open(os.path.join(out, ".metadata"), "wb") as f:
        pickle.dump(meta, f, protocol=d.METADATA_PROTOCOL)


def dcp(out, ranks, mib):
    import numpy as np
    import make_dcp as d
    cols = 1024
    rows = mib * (1 << 20) // 4 // cols
    rng = np.random.default_rng(1)
    whole = rng.standard_normal((rows, cols), dtype=np.float32)
    per = rows // ranks
    states = []
    for r in range(ranks):
        part = d.torch.from_numpy(whole[r * per:(r + 1) * per].copy())
        states.append({"w": d.Shard(part, whole.shape, (r * per, 0))})
    d.dcp_save(out, states, checkpoint_id=out)
    import hashlib
    print(hashlib.sha256(whole.tobytes()).hexdigest())


def float8(path, mib):
    import numpy as np
    rng = np.random.default_rng(8)
    n = mib << 20
    header = {"__metadata__": {"format": "pt"},
              "w": {"dtype": "F8_E4M3", "shape": [n // 4096, 4096], "data_offsets": [0, n]}}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    # A 64 MiB block of codes, repeated: the codes of small weights, both signs.
    block = (rng.integers(0x20, 0x48, size=64 << 20, dtype=np.uint8) |
             (rng.integers(0, 2, size=64 << 20, dtype=np.uint8) << 7))
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _ in range(n // block.size):
            f.write(block.tobytes())


def read_sharded(folder):
    read = 0
    with open(os.path.join(folder, "model.safetensors.index.json"), "rb") as f:
        data = f.read()
        read += len(data)
    index = json.loads(data)
    count = 0
    for shard in sorted(set(index["weight_map"].values())):
        with open(os.path.join(folder, shard), "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
            read += 8 + n
            count += len(header) - 1
    print(count, read)


def load_metadata(path):
    import make_dcp  # noqa: F401 (the stand-in classes)
    with open(path, "rb") as f:
        meta = pickle.load(f)
    print(sum(len(m.chunks) for m in meta.state_dict_metadata.values()))


if __name__ == "__main__":
    what, where = sys.argv[1], sys.argv[2]
    rest = [int(a) for a in sys.argv[3:]]
    {"sharded": sharded, "metadata": metadata, "dcp": dcp, "float8": float8,
     "read-sharded": read_sharded,
     "load-metadata": load_metadata}[what](where, *rest)
