#!/usr/bin/python3
"""Writes torch.distributed.checkpoint (DCP) directories as torch 2.x's
dcp.save with the default FileSystemWriter and DefaultSavePlanner writes them,
and prints what each fixture holds as JSON (tensor sha256s computed with numpy
from the original full arrays, never from the files).

torch here is 1.13, which has no torch.distributed.checkpoint of the 2.x kind,
so the classes that end up in `.metadata` are stand-ins defined below under
the upstream module paths and names (placed in fresh module objects in
sys.modules, shadowing torch 1.13's own _shard module), so pickle emits the
same opcodes upstream does.  The save pipeline is re-told in our own words,
file by file, from pytorch/pytorch as stored (commit ids where read_file gave
one):

- torch/distributed/checkpoint/metadata.py @ 57ba412974d87ca62f0c7010e5953581587c40c6
  (Metadata, TensorStorageMetadata, ChunkStorageMetadata, BytesStorageMetadata,
  TensorProperties + _MEM_FORMAT_ENCODING, StorageMeta, frozen MetadataIndex);
  an older version @ 03e266fa83db15f9755e8467ade6968d230d3e17 (3-field Metadata);
- torch/distributed/_shard/sharded_tensor/metadata.py @ e049ebe3834c5eaba19f1008817f1f6fe5c35248
  (where TensorProperties / MEM_FORMAT_ENCODING lived up to torch 2.3);
- torch/distributed/checkpoint/filesystem.py @ b639d82d83d41b747b1d856e49971674cf7e8fc5
  and a newer stored version (read_file id 81733980; no commit given) with
  _StorageInfo.transform_descriptors, its __getstate__, SerializationFormat;
- torch/distributed/checkpoint/default_planner.py @ 126fc44a272cec46bc5d17ce6a8de38752990ea4
  and a newer stored version (read_file id 92195890) using dedup_save_plans;
- torch/distributed/checkpoint/_nested_dict.py @ a675d4395b16dcb127152779b57c7719296e3b22;
- torch/distributed/checkpoint/_traverse.py @ 081d35faa0097e50cd8b71f52c1209c9f5dea6f8
  (the traversal kept as traverse_state_dict_v_2_3) and the 2.4+ traversal
  (read_file id 5804616992, a copy of upstream's current file);
- torch/distributed/checkpoint/planner_helpers.py @ 55a9611ffad0869300874008c211b536c4627e6c;
- torch/distributed/checkpoint/planner.py @ 942d1ca983cfb839d424e4f415760d94af2aeeb3
  (+ WriteItem.tensor_storage_size from newer versions);
- torch/distributed/checkpoint/_dedup_save_plans.py @ 646bddd846c0429f88818944f085b43c9b96665f;
- torch/distributed/checkpoint/state_dict_saver.py @ 76a16b948e08d6477940b4a88a912073e3c993ba
  (+ newer _save_state_dict with storage_meta);
- torch/distributed/checkpoint/_extension.py @ 6a45ce69279446b43300c3bf378b4f0c12f61e64
  and @ 195199d2f9d859dcf1292affc2dd62ca483e300c (ZStandard: "stream.zstd/1",
  zstandard.ZstdCompressor().stream_writer; Rot13Example: "stream.rot13/1");
  the writer's NoCloseWriter and the reader's transform_load_stream from a
  newer stored filesystem.py (find_string id 61511187227; no commit given):
  extensions wrap the file in turn, and a reader undoes the descriptors in
  the order listed.  Fixtures "zstd", "zstd_rot13" and "four_ranks_zstd"
  need Debian's python3-zstandard; "zstd_raw" writes stored zstd blocks
  by hand; "unknown_transform" names an extension no reader knows;
- the serialization_format=SerializationFormat.SAFETENSORS variant of the same
  stored filesystem.py (_write_item, _write_files_from_queue) with
  torch/distributed/checkpoint/_hf_utils.py (find_string id 886899774; no
  commit given; CUSTOM_METADATA_KEY "DCP_SHARDING_INFO", DCP_VERSION_KEY,
  FORMAT_KEY/FORMAT_VALUE "format"/"pt", HF_DCP_VERSION 1.0): byte items are
  written as before; a tensor item writes nothing, its _StorageInfo is the
  file's position then (the end of the byte items) and its numel x element
  size; after the last item, safetensors.torch.save of the rank's tensors by
  fqn, with {"DCP_SHARDING_INFO": json.dumps({fqn: {"saved_offsets": ...}}),
  "DCP_VERSION": "1.0", "format": "pt"} as metadata.  The safetensors layout
  is make_sharded.py's (safetensors' serialize).  Fixtures "safetensors"
  and "four_ranks_safetensors";
- torch/distributed/checkpoint/_version.py @ af920957746c08ded2c0ab63a85d72be57ad9d64;
- caffe2/serialize/inline_container.cc @ 3834689c5e3caabf546aa98d83f47387ca50e684
  (record padding, end-of-file records, .data/serialization_id).

Chunk streams are written by torch 1.13's torch.save.  Fixtures "torch21" and
"torch27" re-emit each stream as torch 2.1-2.6 / 2.7+ write it (records
byteorder, .data/serialization_id, and for 2.7+ .format_version and
.storage_alignment, in upstream order) with a zip writer that reproduces
torch's byte layout; it is checked to give back torch 1.13's bytes exactly
when fed torch 1.13's records.

usage: make_dcp.py OUT_DIR [--marker PATH]
  OUT_DIR/<fixture>/ for each fixture; JSON on stdout.  The hostile fixtures
  touch PATH (default OUT_DIR/hostile_marker) when unpickled unsafely.
"""
import collections
import collections.abc
import dataclasses
import enum
import hashlib
import io
import json
import os
import pathlib
import pickle
import shlex
import shutil
import struct
import sys
import types
import uuid
import zipfile
import zlib

import numpy as np
import torch

from make_sharded import safetensors_bytes

METADATA_PROTOCOL = 4      # pickle.dump default on Python 3.8-3.13 (5 from 3.14)


# --------------------------------------------------------------------------
# stand-in modules and classes (upstream paths, names, field order)
# --------------------------------------------------------------------------

def _module(name):
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    return mod


_module("torch.distributed.checkpoint").__path__ = []
M_META = _module("torch.distributed.checkpoint.metadata")
M_FS = _module("torch.distributed.checkpoint.filesystem")
M_PLANNER = _module("torch.distributed.checkpoint.planner")
M_STORAGE = _module("torch.distributed.checkpoint.storage")
# torch 1.13 has this module with its own classes: shadow it, never use them.
M_SHARD = _module("torch.distributed._shard.sharded_tensor.metadata")


def _place(mod, name):
    def put(cls):
        cls.__module__ = mod.__name__
        cls.__qualname__ = name
        cls.__name__ = name
        setattr(mod, name, cls)
        return cls
    return put


def _size(values):
    return torch.Size([int(v) for v in values])


@_place(M_META, "ChunkStorageMetadata")
@dataclasses.dataclass
class ChunkStorageMetadata:
    offsets: torch.Size
    sizes: torch.Size


@_place(M_META, "_MEM_FORMAT_ENCODING")
class MemFormat(enum.Enum):
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2
    # Python 3.11+ pickles members as getattr(cls, name): left as is.


@_place(M_SHARD, "MEM_FORMAT_ENCODING")
class LegacyMemFormat(enum.Enum):
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2

    def __reduce_ex__(self, proto):
        # Python <= 3.10 pickled enum members by value: cls(value).
        return self.__class__, (self._value_,)


_FORMATS = [torch.contiguous_format, torch.channels_last, torch.preserve_format]


def _properties_class(encoding):
    @dataclasses.dataclass
    class Properties:
        dtype: torch.dtype = dataclasses.field(default_factory=torch.get_default_dtype)
        layout: torch.layout = dataclasses.field(default=torch.strided)
        requires_grad: bool = False
        memory_format: torch.memory_format = dataclasses.field(default=torch.contiguous_format)
        pin_memory: bool = False

        def __getstate__(self):
            # memory_format itself cannot be pickled: it goes as the enum.
            code = encoding(_FORMATS.index(self.memory_format))
            return (self.dtype, self.layout, self.requires_grad, code, self.pin_memory)

        def __setstate__(self, state):
            self.dtype, self.layout, self.requires_grad, code, self.pin_memory = state
            self.memory_format = _FORMATS[encoding(code).value]

        @classmethod
        def create_from_tensor(cls, tensor):
            return cls(dtype=tensor.dtype, layout=tensor.layout,
                       requires_grad=tensor.requires_grad,
                       memory_format=torch.contiguous_format,
                       pin_memory=tensor.is_pinned())
    return Properties


TensorProperties = _place(M_META, "TensorProperties")(_properties_class(MemFormat))
LegacyTensorProperties = _place(M_SHARD, "TensorProperties")(_properties_class(LegacyMemFormat))


@_place(M_META, "TensorStorageMetadata")
@dataclasses.dataclass
class TensorStorageMetadata:
    properties: object
    size: torch.Size
    chunks: list


@_place(M_META, "BytesStorageMetadata")
@dataclasses.dataclass
class BytesStorageMetadata:
    pass


@_place(M_META, "StorageMeta")
@dataclasses.dataclass
class StorageMeta:
    checkpoint_id: object = None
    save_id: object = None
    load_id: object = None
    modules: list = dataclasses.field(default_factory=list)


@_place(M_META, "Metadata")
@dataclasses.dataclass
class Metadata:
    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None
    storage_meta: object = None
    version: object = None


@dataclasses.dataclass
class LegacyMetadata:          # torch <= 2.3: only three fields
    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None


@_place(M_META, "MetadataIndex")
@dataclasses.dataclass(frozen=True)
class MetadataIndex:
    fqn: str
    offset: object = None
    index: object = dataclasses.field(hash=False, compare=False, default=None)

    def __init__(self, fqn, offset=None, index=None):
        # same attribute order as upstream: fqn, index, then offset if given
        object.__setattr__(self, "fqn", fqn)
        object.__setattr__(self, "index", index)
        if offset is not None:
            object.__setattr__(self, "offset", torch.Size(offset))


@_place(M_FS, "_StorageInfo")
@dataclasses.dataclass
class StorageInfo:
    relative_path: str
    offset: int
    length: int
    transform_descriptors: object = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if v is not None}


@_place(M_FS, "_StoragePrefix")
@dataclasses.dataclass
class StoragePrefix:
    prefix: str


@_place(M_PLANNER, "WriteItemType")
class WriteItemType(enum.Enum):
    TENSOR = 1
    SHARD = 2
    BYTE_IO = 3


@_place(M_PLANNER, "TensorWriteData")
@dataclasses.dataclass(frozen=True)
class TensorWriteData:
    chunk: ChunkStorageMetadata
    properties: object
    size: torch.Size


@_place(M_PLANNER, "WriteItem")
@dataclasses.dataclass(frozen=True)
class WriteItem:
    index: MetadataIndex
    type: WriteItemType
    tensor_data: object = None

    def tensor_storage_size(self):
        if self.tensor_data is None:
            return None
        return _numel(self.tensor_data.size) * _element_size(self.tensor_data.properties.dtype)


@_place(M_PLANNER, "SavePlan")
@dataclasses.dataclass(frozen=True)
class SavePlan:
    items: list
    storage_data: object = None
    planner_data: object = None


@_place(M_STORAGE, "WriteResult")
@dataclasses.dataclass(frozen=True)
class WriteResult:
    index: MetadataIndex
    size_in_bytes: int
    storage_data: object


def _numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _element_size(dtype):
    return torch.empty((), dtype=dtype).element_size()


class _swap:
    """Temporarily bind module.name to another class (for the 3-field Metadata)."""

    def __init__(self, mod, name, cls):
        self.mod, self.name, self.cls = mod, name, cls

    def __enter__(self):
        self.old = getattr(self.mod, self.name)
        self.cls.__module__, self.cls.__qualname__ = self.mod.__name__, self.name
        setattr(self.mod, self.name, self.cls)

    def __exit__(self, *exc):
        setattr(self.mod, self.name, self.old)


# --------------------------------------------------------------------------
# DTensor stand-in: a rank's local shard of a global tensor
# --------------------------------------------------------------------------

class Shard:
    def __init__(self, local, global_shape, offsets):
        self.local = local
        self.global_shape = tuple(global_shape)
        self.offsets = tuple(offsets)


def _is_tensor(value):
    return isinstance(value, (torch.Tensor, Shard))


# --------------------------------------------------------------------------
# _traverse.py / _nested_dict.py: flatten_state_dict
# --------------------------------------------------------------------------

def _traverse(state_dict, visit, v23=False):
    """Calls visit(path, value) for each leaf.  From 2.4 every Mapping is
    walked and a list only when something below it is a tensor or a mapping;
    tuples are leaves.  The 2.3 walk stopped at any container holding no
    tensor (at any depth)."""
    def terminal(value):
        if isinstance(value, collections.abc.Mapping):
            if not v23:
                return False
            entries = value.values()
        elif isinstance(value, list):
            entries = value
        else:
            return True
        for entry in entries:
            if isinstance(entry, (collections.abc.Mapping, list)) and not terminal(entry):
                return False
            if _is_tensor(entry):
                return False
        return True

    def walk(path, value):
        if v23:
            if terminal(value):
                visit(path, value)
            elif isinstance(value, collections.abc.Mapping):
                for k, v in value.items():
                    walk(path + (str(k),), v)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    walk(path + (i,), v)
            return
        if isinstance(value, collections.abc.Mapping):
            for k, v in value.items():
                walk(path + (str(k),), v)
        elif terminal(value):
            visit(path, value)
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(path + (i,), v)

    for key, value in state_dict.items():
        walk((str(key),), value)


def flatten_state_dict(state_dict, v23=False):
    flat, mappings = {}, {}

    def copy(path, value):
        fqn = ".".join(map(str, path))
        if fqn in flat:
            raise ValueError("duplicated flatten key " + fqn)
        flat[fqn] = value
        mappings[fqn] = path

    _traverse(state_dict, copy, v23)
    return flat, mappings


# --------------------------------------------------------------------------
# planner_helpers.py / default_planner.py / _dedup_save_plans.py
# --------------------------------------------------------------------------

def _write_items(fqn, obj, props_cls):
    if isinstance(obj, Shard):                     # DTensor.__create_write_items__
        sizes, offsets = _size(obj.local.shape), _size(obj.offsets)
        return [WriteItem(index=MetadataIndex(fqn, offsets), type=WriteItemType.SHARD,
                          tensor_data=TensorWriteData(
                              chunk=ChunkStorageMetadata(offsets=offsets, sizes=sizes),
                              properties=props_cls.create_from_tensor(obj.local),
                              size=_size(obj.global_shape)))]
    if isinstance(obj, torch.Tensor):
        offsets = _size([0] * obj.dim())
        return [WriteItem(index=MetadataIndex(fqn, offsets), type=WriteItemType.TENSOR,
                          tensor_data=TensorWriteData(
                              chunk=ChunkStorageMetadata(offsets=offsets, sizes=obj.size()),
                              properties=props_cls.create_from_tensor(obj),
                              size=obj.size()))]
    return [WriteItem(index=MetadataIndex(fqn), type=WriteItemType.BYTE_IO)]


def dedup_save_plans(plans, save_to_lowest_rank=False):
    owners = collections.defaultdict(set)
    items = {}
    for rank, plan in enumerate(plans):
        for item in plan.items:
            owners[item.index].add(rank)
            items[item.index] = item
    drop = [set() for _ in plans]
    planned = [0] * len(plans)
    for index, ranks in owners.items():
        if save_to_lowest_rank:
            keep = min(ranks)
        else:
            keep = min(ranks, key=lambda r: planned[r])
        planned[keep] += items[index].tensor_storage_size() or 1
        ranks.remove(keep)
        for r in ranks:
            drop[r].add(index)
    return [dataclasses.replace(plan, items=[i for i in plan.items if i.index not in drop[r]])
            for r, plan in enumerate(plans)]


def create_global_save_plan(plans):
    md = {}
    new_plans = []
    for plan in plans:
        new_items = []
        for item in plan.items:
            if item.type != WriteItemType.SHARD:
                assert item.index.fqn not in md
            if item.type == WriteItemType.BYTE_IO:
                md[item.index.fqn] = BytesStorageMetadata()
                new_items.append(item)
                continue
            tmd = md.setdefault(item.index.fqn, TensorStorageMetadata(
                properties=item.tensor_data.properties, size=item.tensor_data.size, chunks=[]))
            new_index = dataclasses.replace(item.index, index=len(tmd.chunks))
            new_items.append(dataclasses.replace(item, index=new_index))
            tmd.chunks.append(item.tensor_data.chunk)
        new_plans.append(dataclasses.replace(plan, items=new_items))
    return new_plans, Metadata(md)


def validate_global_plan(plans, metadata):
    good = True
    for value in metadata.state_dict_metadata.values():
        if isinstance(value, BytesStorageMetadata) or len(value.size) == 0:
            continue
        volume = 0
        for i, c0 in enumerate(value.chunks):
            for d in range(len(value.size)):
                if c0.offsets[d] < 0 or c0.sizes[d] < 0 or \
                        c0.offsets[d] + c0.sizes[d] > value.size[d]:
                    good = False
            volume += _numel(c0.sizes)
            for c1 in value.chunks[i + 1:]:
                if all(c0.offsets[d] < c1.offsets[d] + c1.sizes[d] and
                       c1.offsets[d] < c0.offsets[d] + c0.sizes[d]
                       for d in range(len(c0.offsets))):
                    good = False
        if len(plans) > 1 and volume != _numel(value.size):
            good = False
    return good


def _roundtrip(obj):
    """What gather_object / scatter_object_list do to a plan between ranks."""
    return pickle.loads(pickle.dumps(obj))


# --------------------------------------------------------------------------
# torch.save streams: torch's zip layout, torch 2.x records, zstd frames
# --------------------------------------------------------------------------

def _zip_records(stream):
    with zipfile.ZipFile(io.BytesIO(stream)) as z:
        infos = z.infolist()
        archive = infos[0].filename.split("/")[0]
        return archive, [(i.filename[len(archive) + 1:], z.read(i)) for i in infos]


def torch_zip(archive, records, crc32=True):
    """Byte layout of caffe2 PyTorchStreamWriter + miniz: stored records,
    data descriptors, an "FB" extra field padding each payload to 64 bytes,
    zip64 end records.  crc32=False is torch.serialization.set_crc32_options
    (False) (torch >= 2.4): PyTorchStreamWriter::writeRecord
    (caffe2/serialize/inline_container.cc, pytorch 09ecec1f) then adds
    MZ_ZIP_FLAG_DO_NOT_COMPUTE_CRC32 and passes uncomp_crc32=0, which
    mz_zip_writer_add_mem_ex_v2 (third_party/miniz-3.0.2/miniz.c, pytorch
    01f9ef32) leaves as is: 0 in the data descriptor and the central
    directory."""
    out = bytearray()
    central = bytearray()
    for name, data in records:
        full = (archive + "/" + name).encode()
        start = len(out) + 30 + len(full) + 4
        pad = (64 - start % 64) % 64
        extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        crc = zlib.crc32(data) & 0xFFFFFFFF if crc32 else 0
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, 0x0808, 0, 0, 0, 0, 0, 0,
                           len(full), len(extra)) + full + extra + data
        out += struct.pack("<IIII", 0x08074B50, crc, len(data), len(data))
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, 0x0808, 0, 0, 0, crc,
                               len(data), len(data), len(full), 0, 0, 0, 0, 0, offset) + full
    cd_offset = len(out)
    out += central
    eocd64 = len(out)
    n = len(records)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 0x002D, 0, 0, n, n,
                       len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), cd_offset, 0)
    return bytes(out)


def _std_hash(text):
    """libstdc++ std::hash<std::string> (64-bit _Hash_bytes)."""
    m64 = (1 << 64) - 1
    mul = (0xC6A4A793 << 32) + 0x5BD1E995
    data = text.encode()
    n = len(data)
    h = (0xC70F6907 ^ (n * mul)) & m64
    for i in range(0, n & ~7, 8):
        d = (int.from_bytes(data[i:i + 8], "little") * mul) & m64
        h = ((h ^ ((d ^ (d >> 47)) * mul & m64)) * mul) & m64
    if n & 7:
        h = ((h ^ int.from_bytes(data[n & ~7:], "little")) * mul) & m64
    h = ((h ^ (h >> 47)) * mul) & m64
    return h ^ (h >> 47)


def _hash_combine(seed, value):
    m64 = (1 << 64) - 1
    return (seed ^ ((value + 0x9E3779B9 + ((seed << 6) & m64) + (seed >> 2)) & m64)) & m64


def torch2x_stream(stream, layout, crc32=True):
    """Re-emits a torch 1.13 torch.save zip as torch 2.1-2.6 ("2.1") or
    2.7+ ("2.7") writes the same object (crc32: as torch_zip)."""
    archive, records = _zip_records(stream)
    named = dict(records)
    data_keys = [n for n, _ in records if n.startswith("data/")]
    head = [("data.pkl", named["data.pkl"])]
    if layout == "2.7":
        head += [(".format_version", b"1"), (".storage_alignment", b"64")]
        data_keys.sort(key=lambda n: int(n[5:]))
    else:
        data_keys.sort()
    out = head + [("byteorder", b"little")] + [(n, named[n]) for n in data_keys]
    out.append(("version", named["version"]))
    # .data/serialization_id: 20 digits of combined record-name hashes
    # (std::unordered_set order; taken here in write order, so not bit-exact)
    # then 20 digits of the combined CRC32s of the records, in write order
    # (as their data descriptors record them: 0 without CRCs).
    names, crcs = 0, 0
    for name, data in out:
        names = _hash_combine(names, _std_hash(name))
        crcs = _hash_combine(crcs, zlib.crc32(data) & 0xFFFFFFFF if crc32 else 0)
    out.append((".data/serialization_id", ("%020d%020d" % (names, crcs)).encode()))
    return torch_zip(archive, out, crc32)


def zstd_raw_frame(data):
    """A valid zstd frame holding `data` in raw (stored) blocks: no content
    size, no checksum, 128 KiB window (what a streaming compressor declares)."""
    out = bytearray(struct.pack("<I", 0xFD2FB528)) + bytes([0x00, 0x38])
    pos = 0
    while True:
        block = data[pos:pos + (128 << 10)]
        pos += len(block)
        last = pos >= len(data)
        out += (int(last) | (len(block) << 3)).to_bytes(3, "little") + block
        if last:
            return bytes(out)


def zstd_stream(data):
    """ZStandard.transform_to (_extension.py): zstandard.ZstdCompressor()
    .stream_writer over the file, wrapped so that closing it ends the frame
    but leaves the file open (filesystem.py's NoCloseWriter)."""
    import zstandard

    class NoCloseWriter(io.RawIOBase):
        def __init__(self, raw):
            self.raw = raw

        def writable(self):
            return True

        def write(self, b):
            return self.raw.write(b)

        def close(self):
            self.raw.flush()

    out = io.BytesIO()
    writer = zstandard.ZstdCompressor().stream_writer(NoCloseWriter(out))
    writer.write(data)
    writer.close()
    return out.getvalue()


def swap_case(data):
    """Rot13Example._rot13bytes (_extension.py): ASCII letters change case."""
    return bytes(c + 32 if 65 <= c <= 90 else c - 32 if 97 <= c <= 122 else c for c in data)


# transform descriptor -> how a stream is written through it
STREAM_TRANSFORMS = {
    "stream.zstd/1": zstd_stream,
    "stream.rot13/1": swap_case,
}


def torch_save_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


# --------------------------------------------------------------------------
# filesystem.py: buckets, files, write items, finish
# --------------------------------------------------------------------------

def _item_size(item):
    return _numel(item.tensor_data.size) * _element_size(item.tensor_data.properties.dtype)


def split_by_size_and_type(bins, items):
    if bins == 1:
        return [items]
    bytes_w = [i for i in items if i.type == WriteItemType.BYTE_IO]
    tensor_w = [i for i in items if i.type != WriteItemType.BYTE_IO]
    buckets = [[] for _ in range(bins)]
    sizes = [0] * bins
    tensor_w.sort(key=_item_size, reverse=True)
    for i, item in enumerate(bytes_w):
        buckets[i % bins].append(item)
    for item in tensor_w:
        b = min(range(bins), key=lambda k: sizes[k])
        buckets[b].append(item)
        sizes[b] += _item_size(item)
    return buckets


def _resolve(flat, item):
    obj = flat[item.index.fqn]
    if item.type == WriteItemType.BYTE_IO:
        return torch_save_bytes(obj)           # transform_object: torch.save into BytesIO
    tensor = obj.local if isinstance(obj, Shard) else obj
    tensor = tensor.detach().cpu()
    if tensor.storage().size() != tensor.numel():
        tensor = tensor.clone()                # minimal storage before torch.save
    return tensor


def write_rank(directory, rank, plan, flat, opts):
    results = []
    buckets = split_by_size_and_type(opts["thread_count"], plan.items)
    for i, bucket in enumerate(buckets):
        name = "%s%d.distcp" % (plan.storage_data.prefix, i)
        tensors = [w for w in bucket if w.type != WriteItemType.BYTE_IO]
        if opts["thread_count"] == 1 and opts["cuda"]:
            tensors.sort(key=_item_size)       # _OverlappingCpuLoader order
        order = [w for w in bucket if w.type == WriteItemType.BYTE_IO] + tensors
        as_safetensors = opts["serialization"] == "safetensors"
        tensor_dict, sharding_info = {}, {}
        with open(os.path.join(directory, name), "wb") as f:
            for item in order:
                data = _resolve(flat, item)
                if as_safetensors and not isinstance(data, bytes):
                    # Nothing written yet: the tensor goes into the file's
                    # safetensors data, after the last item.
                    info = StorageInfo(name, f.tell(), data.numel() * data.element_size())
                    results.append(WriteResult(index=item.index, size_in_bytes=info.length,
                                               storage_data=info))
                    tensor_dict[item.index.fqn] = _safetensors_entry(data)
                    sharding_info[item.index.fqn] = {
                        "saved_offsets": list(item.tensor_data.chunk.offsets)}
                    continue
                raw = data if isinstance(data, bytes) else torch_save_bytes(data)
                if opts["stream"] != "1.13":
                    raw = torch2x_stream(raw, opts["stream"], opts["crc32"])
                descriptors = None
                if opts["zstd"]:
                    raw = zstd_raw_frame(raw)
                    descriptors = ["stream.zstd/1"]
                if opts["transforms"]:
                    # Written through each extension in turn; read back by
                    # undoing them in the order recorded, the first on the
                    # file's bytes (_StorageReaderTransforms.transform_load_stream).
                    for d in reversed(opts["transforms"]):
                        if d in STREAM_TRANSFORMS:
                            raw = STREAM_TRANSFORMS[d](raw)
                    descriptors = list(opts["transforms"])
                offset = f.tell()
                f.write(raw)
                info = StorageInfo(name, offset, f.tell() - offset,
                                   transform_descriptors=descriptors)
                results.append(WriteResult(index=item.index, size_in_bytes=info.length,
                                           storage_data=info))
            if as_safetensors:
                f.write(safetensors_bytes(tensor_dict, {
                    "DCP_SHARDING_INFO": json.dumps(sharding_info),
                    "DCP_VERSION": str(1.0),
                    "format": "pt"}))
    return results


SAFETENSORS_NAMES = {"torch.float32": "F32", "torch.float16": "F16", "torch.int64": "I64",
                     "torch.bfloat16": "BF16"}


def _safetensors_entry(tensor):
    """What safetensors.torch.save takes of a tensor: its dtype's name and
    its bytes, which must be contiguous (it refuses a view otherwise)."""
    if not tensor.is_contiguous():
        raise ValueError("safetensors.torch.save refuses a non-contiguous tensor")
    dtype = str(tensor.dtype)
    if dtype == "torch.bfloat16":          # torch 1.13's numpy() takes no bfloat16
        return "BF16", tensor.view(torch.int16).numpy().view("<u2")
    return SAFETENSORS_NAMES[dtype], tensor.numpy()


def dcp_save(directory, rank_state_dicts, *, checkpoint_id, thread_count=1, cuda=False,
             stream="1.13", zstd=False, transforms=(), legacy=False, allow_invalid=False,
             tamper=None, serialization="torch_save", crc32=True):
    """dcp.save(state_dict, checkpoint_id=...) run on len(rank_state_dicts)
    ranks with FileSystemWriter(thread_count=...) and DefaultSavePlanner."""
    os.makedirs(directory, exist_ok=True)
    world = len(rank_state_dicts)
    props_cls = LegacyTensorProperties if legacy else TensorProperties
    flats, plans = [], []
    for rank, sd in enumerate(rank_state_dicts):
        flat, mappings = flatten_state_dict(sd, v23=legacy)
        items = []
        for fqn, obj in flat.items():
            if legacy and not _is_tensor(obj) and rank != 0:
                continue                       # <= 2.3: only the coordinator wrote bytes
            items += _write_items(fqn, obj, props_cls)
        flats.append(flat)
        plans.append(SavePlan(items, planner_data=mappings))
    if world > 1:
        plans = [_roundtrip(p) for p in plans]
    plans = dedup_save_plans(plans)
    plans, metadata = create_global_save_plan(plans)
    merged = dict(collections.ChainMap(*[p.planner_data for p in plans]))
    metadata = dataclasses.replace(metadata, planner_data=merged)
    if not validate_global_plan(plans, metadata) and not allow_invalid:
        raise ValueError("Failed to validate global plan")
    plans = [dataclasses.replace(p, storage_data=StoragePrefix("__%d_" % i))
             for i, p in enumerate(plans)]
    if world > 1:
        plans = [_roundtrip(p) for p in plans]
    opts = {"thread_count": thread_count, "cuda": cuda, "stream": stream, "zstd": zstd,
            "transforms": list(transforms), "serialization": serialization, "crc32": crc32}
    results = [write_rank(directory, r, plans[r], flats[r], opts) for r in range(world)]
    if world > 1:
        results = [_roundtrip(r) for r in results]
    storage = {}
    for wr_list in results:
        storage.update({wr.index: wr.storage_data for wr in wr_list})
    metadata.storage_data = storage
    save_id = str(uuid.UUID(bytes=hashlib.sha256(checkpoint_id.encode()).digest()[:16],
                            version=4))
    metadata.storage_meta = StorageMeta(checkpoint_id=pathlib.PosixPath(checkpoint_id),
                                        save_id=save_id)
    if tamper:
        tamper(metadata)
    if legacy:
        metadata = LegacyMetadata(metadata.state_dict_metadata, metadata.planner_data,
                                  metadata.storage_data)
        with _swap(M_META, "Metadata", LegacyMetadata):
            data = pickle.dumps(metadata, protocol=METADATA_PROTOCOL)
    else:
        data = pickle.dumps(metadata, protocol=METADATA_PROTOCOL)
    with open(os.path.join(directory, ".metadata"), "wb") as f:
        f.write(data)
    return metadata


# --------------------------------------------------------------------------
# data: numpy originals, torch views of them
# --------------------------------------------------------------------------

def bf16(a):
    """bfloat16 bits of float32 values (round to nearest even, as torch does)."""
    bits = a.astype("<f4").view("<u4").astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")


NP = {"torch.float32": "<f4", "torch.float16": "<f2", "torch.int64": "<i8",
      "torch.bfloat16": "<u2"}


def to_torch(dtype, a):
    a = np.array(a, order="C", copy=True)       # keeps 0-d arrays 0-d
    if dtype == "torch.bfloat16":      # torch 1.13 takes no uint16: same bits as int16
        return torch.from_numpy(a.view("<i2")).view(torch.bfloat16)
    return torch.from_numpy(a)


class Book:
    """The original full arrays, by flattened key, for the expected JSON."""

    def __init__(self):
        self.tensors = {}

    def add(self, fqn, dtype, a):
        a = np.array(a, dtype=NP[dtype], order="C", copy=True)
        self.tensors[fqn] = (dtype, a)
        return a


def one_rank_state(book, contiguous=False):
    """contiguous: every tensor as safetensors can save it (no transposed view)."""
    rng = np.random.default_rng(20240601)
    f32 = lambda *s: rng.standard_normal(s).astype("<f4")
    embed = book.add("model.embed.weight", "torch.float32", f32(16, 8))
    attn = book.add("model.layers.0.attn.weight", "torch.bfloat16", bf16(f32(8, 8)))
    bias = book.add("model.layers.0.attn.bias", "torch.float32", f32(8))
    mlp_base = f32(6, 8)                                   # saved as a transposed view
    book.add("model.layers.0.mlp.weight", "torch.float32", mlp_base.T)
    rope_base = f32(10, 4)                                 # saved as a row slice view
    book.add("model.rope.cache", "torch.float32", rope_base[2:6])
    head = book.add("model.head.weight", "torch.float16", f32(4, 8).astype("<f2"))
    pos = book.add("model.pos_ids", "torch.int64", np.arange(12, dtype="<i8") * 3 - 5)
    scale = book.add("model.scale", "torch.float32", np.array(0.125, "<f4"))
    empty = book.add("model.empty_buffer", "torch.float32", np.zeros((0, 4), "<f4"))
    step = book.add("optim.state.0.step", "torch.float32", np.array(7.0, "<f4"))
    m1 = book.add("optim.state.0.exp_avg", "torch.float32", f32(8) * 0.01)
    m2 = book.add("optim.state.0.exp_avg_sq", "torch.float32", np.abs(f32(8)) * 1e-4)
    bias_t = to_torch("torch.float32", bias).requires_grad_(True)   # a Parameter
    model = {
        "embed.weight": to_torch("torch.float32", embed),
        "layers.0.attn.weight": to_torch("torch.bfloat16", attn),
        "layers.0.attn.bias": bias_t,
        "layers.0.mlp.weight": (to_torch("torch.float32", mlp_base.T) if contiguous
                                else to_torch("torch.float32", mlp_base).t()),
        "rope.cache": to_torch("torch.float32", rope_base)[2:6],
        "head.weight": to_torch("torch.float16", head),
        "pos_ids": to_torch("torch.int64", pos),
        "scale": to_torch("torch.float32", scale),
        "empty_buffer": to_torch("torch.float32", empty),
    }
    optim = {
        "state": {0: {"step": to_torch("torch.float32", step),
                      "exp_avg": to_torch("torch.float32", m1),
                      "exp_avg_sq": to_torch("torch.float32", m2)}},
        "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08,
                          "weight_decay": 0.0, "amsgrad": False, "params": [0]}],
    }
    lr_scheduler = {"step_size": 30, "gamma": 0.1, "base_lrs": [0.001, 0.0005],
                    "last_epoch": 7, "verbose": False, "_step_count": 8,
                    "_get_lr_called_within_step": False, "_last_lr": [0.0001, 5e-05]}
    return {"model": model, "optim": optim, "lr_scheduler": lr_scheduler,
            "step": 1234, "loss_scale": 65536.0, "run_name": "tdstudio-demo",
            "note": None, "empty": {}}


def _row_chunks(n, world):
    """torch.chunk / Shard(dim) split: (offset, size) per rank, empty tail allowed."""
    if n % world == 0:
        return [(n // world * r, n // world) for r in range(world)]
    full = (n + world - 1) // world
    out = []
    for r in range(world):
        start = full * r
        out.append((n, 0) if start > n else (start, min(n, start + full) - start))
    return out


def four_rank_states(book, world=4, variant=None):
    rng = np.random.default_rng(4242)
    f32 = lambda *s: rng.standard_normal(s).astype("<f4")
    w_row = book.add("model.layers.0.w_row", "torch.float32", f32(8, 6))
    w_uneven = book.add("model.layers.0.w_uneven", "torch.float32", f32(10, 4))
    w_col = book.add("model.layers.1.w_col", "torch.bfloat16", bf16(f32(6, 8)))
    w_tail = book.add("model.layers.1.w_empty_tail", "torch.float32", f32(6, 3))
    norm = book.add("model.norm.weight", "torch.float32", 1 + 0.1 * f32(6))
    row_m1 = book.add("optim.state.layers.0.w_row.exp_avg", "torch.float32", f32(8, 6) * 0.01)
    row_m2 = book.add("optim.state.layers.0.w_row.exp_avg_sq", "torch.float32",
                      np.abs(f32(8, 6)) * 1e-4)
    col_m1 = book.add("optim.state.layers.1.w_col.exp_avg", "torch.float32", f32(6, 8) * 0.01)
    step = book.add("optim.state.layers.0.w_row.step", "torch.float32", np.array(3.0, "<f4"))
    step2 = book.add("optim.state.layers.1.w_col.step", "torch.float32", np.array(3.0, "<f4"))

    def rows(fqn_dtype, a, rank, chunks=None):
        off, n = (chunks or _row_chunks(a.shape[0], world))[rank]
        return Shard(to_torch(fqn_dtype, a[off:off + n]), a.shape, (off,) + (0,) * (a.ndim - 1))

    def cols(fqn_dtype, a, rank):
        off, n = _row_chunks(a.shape[1], world)[rank]
        return Shard(to_torch(fqn_dtype, a[:, off:off + n]), a.shape, (0, off))

    states = []
    for r in range(world):
        uneven_chunks = _row_chunks(10, world)
        if variant == "overlap":
            uneven_chunks = [(0, 3), (2, 4), (6, 3), (9, 1)]  # rank 1 also holds row 2
        model = {
            "layers.0.w_row": rows("torch.float32", w_row, r),
            "layers.0.w_uneven": rows("torch.float32", w_uneven, r, uneven_chunks),
            "layers.1.w_col": cols("torch.bfloat16", w_col, r),
            "layers.1.w_empty_tail": rows("torch.float32", w_tail, r),
            "norm.weight": to_torch("torch.float32", norm),      # replicated on every rank
        }
        if variant == "gap" and r == 3:
            del model["layers.0.w_uneven"]                       # rows 9..10 never saved
        optim = {
            "state": {
                "layers.0.w_row": {"step": to_torch("torch.float32", step),
                                   "exp_avg": rows("torch.float32", row_m1, r),
                                   "exp_avg_sq": rows("torch.float32", row_m2, r)},
                "layers.1.w_col": {"step": to_torch("torch.float32", step2),
                                   "exp_avg": cols("torch.float32", col_m1, r)},
            },
            "param_groups": [{"lr": 0.01, "betas": (0.9, 0.95), "eps": 1e-08,
                              "weight_decay": 0.1,
                              "params": ["layers.0.w_row", "layers.0.w_uneven",
                                         "layers.1.w_col", "layers.1.w_empty_tail",
                                         "norm.weight"]}],
        }
        states.append({"model": model, "optim": optim, "epoch": 3})
    return states


# --------------------------------------------------------------------------
# hostile pickles
# --------------------------------------------------------------------------

class _OsSystem:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return _fake_os_system, (self.command,)


def _fake_os_system(command):
    raise RuntimeError("never called here")


_fake_os_system.__module__, _fake_os_system.__qualname__ = "os", "system"
_fake_os_system.__name__ = "system"


class _GetAttr:
    def __init__(self, target, name):
        self.target, self.name = target, name

    def __call__(self, *args):       # pickle wants a callable in func position
        raise RuntimeError("never called here")

    def __reduce__(self):
        return getattr, (self.target, self.name)


class _Call:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class _Import:
    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return __import__, (self.name,)


def _dump_hostile(metadata):
    real = os.system
    os.system = _fake_os_system
    try:
        return pickle.dumps(metadata, protocol=METADATA_PROTOCOL)
    finally:
        os.system = real


# --------------------------------------------------------------------------
# expected JSON
# --------------------------------------------------------------------------

def _jsonable(value):
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def describe(name, directory, metadata, book, byte_values, legacy=False,
             serialization="torch_save", **extra):
    files = {f: os.path.getsize(os.path.join(directory, f))
             for f in sorted(os.listdir(directory))}
    tensors, byte_items = {}, {}
    storage = metadata.storage_data
    for fqn, md in metadata.state_dict_metadata.items():
        path = list(metadata.planner_data[fqn])
        if isinstance(md, BytesStorageMetadata):
            info = storage[MetadataIndex(fqn)]
            byte_items[fqn] = {"path": path, "value": _jsonable(byte_values[fqn]),
                               "python_type": type(byte_values[fqn]).__name__,
                               "file": info.relative_path, "offset": info.offset,
                               "length": info.length}
            continue
        dtype, a = book.tensors[fqn]
        chunks = []
        for c in md.chunks:
            info = storage[MetadataIndex(fqn, c.offsets)]
            chunk = {"file": info.relative_path, "offset": info.offset, "length": info.length,
                     "offsets": list(c.offsets), "sizes": list(c.sizes)}
            if info.transform_descriptors:
                chunk["transform_descriptors"] = list(info.transform_descriptors)
            if serialization == "safetensors":
                chunk["serialization"] = "safetensors"
            chunks.append(chunk)
        assert str(md.properties.dtype) == dtype and list(md.size) == list(a.shape), fqn
        tensors[fqn] = {"path": path, "dtype": dtype, "shape": list(a.shape),
                        "sha256": hashlib.sha256(a.tobytes()).hexdigest(),
                        "requires_grad": bool(md.properties.requires_grad),
                        "chunks": chunks}
    out = {"dir": name, "files": files, "tensors": tensors, "bytes": byte_items}
    meta = getattr(metadata, "storage_meta", None)
    if meta is not None and not legacy:
        out["storage_meta"] = {"checkpoint_id": str(meta.checkpoint_id),
                               "save_id": meta.save_id}
    out.update(extra)
    return out


def _byte_values(state_dicts, legacy=False):
    values = {}
    for sd in state_dicts:
        flat, _ = flatten_state_dict(sd, v23=legacy)
        for fqn, v in flat.items():
            if not _is_tensor(v):
                values.setdefault(fqn, v)
    return values


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------

def _check_zip_writer():
    for obj in (torch.arange(6, dtype=torch.float32), {"a": 1, "b": [torch.ones(3)]}, 1234):
        raw = torch_save_bytes(obj)
        archive, records = _zip_records(raw)
        if torch_zip(archive, records) != raw:
            raise SystemExit("torch_zip does not reproduce torch.save's layout")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        raise SystemExit("usage: make_dcp.py OUT_DIR [--marker PATH]")
    out = os.path.abspath(args[0])
    marker = os.path.join(out, "hostile_marker")
    if "--marker" in args:
        marker = os.path.abspath(args[args.index("--marker") + 1])
    _check_zip_writer()
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    fixtures = {}

    def fresh(name):
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        return d

    # one rank, CPU-only host (tensors in plan order), torch 1.13 streams
    for name, kw in (("one_rank", {}),
                     ("torch21", {"stream": "2.1"}),
                     ("torch27", {"stream": "2.7", "cuda": True}),
                     # torchforge: torch.serialization.set_crc32_options(False)
                     ("torch27_nocrc", {"stream": "2.7", "crc32": False}),
                     ("zstd_raw", {"zstd": True}),
                     ("zstd", {"transforms": ["stream.zstd/1"], "stream": "2.7"}),
                     ("zstd_rot13", {"transforms": ["stream.zstd/1", "stream.rot13/1"]}),
                     ("unknown_transform", {"transforms": ["stream.lz4/1"]})):
        book = Book()
        sd = one_rank_state(book)
        d = fresh(name)
        md = dcp_save(d, [sd], checkpoint_id="/ckpt/" + name, **kw)
        fixtures[name] = describe(name, d, md, book, _byte_values([sd]), expect="ok",
                                  world_size=1, torch_stream=kw.get("stream", "1.13"),
                                  metadata_layout="2.4+",
                                  writer={"thread_count": 1, "cuda": kw.get("cuda", False)})

    # FileSystemWriter(serialization_format=SerializationFormat.SAFETENSORS):
    # one rank, and four ranks with two writer threads each
    for name, world in (("safetensors", 1), ("four_ranks_safetensors", 4)):
        book = Book()
        states = [one_rank_state(book, contiguous=True)] if world == 1 else \
            four_rank_states(book)
        d = fresh(name)
        md = dcp_save(d, states, checkpoint_id="/ckpt/" + name, thread_count=min(world, 2),
                      stream="2.7", serialization="safetensors")
        fixtures[name] = describe(name, d, md, book, _byte_values(states), expect="ok",
                                  serialization="safetensors", world_size=world,
                                  torch_stream="2.7", metadata_layout="2.4+",
                                  writer={"thread_count": min(world, 2), "cuda": False})

    # torch <= 2.3 layout (Python <= 3.10 enum pickling, 3-field Metadata)
    book = Book()
    sd = one_rank_state(book)
    d = fresh("legacy_v23")
    md = dcp_save(d, [sd], checkpoint_id="/ckpt/legacy_v23", legacy=True)
    fixtures["legacy_v23"] = describe("legacy_v23", d, md, book, _byte_values([sd], True),
                                      legacy=True, expect="ok", world_size=1,
                                      torch_stream="1.13", metadata_layout="2.3",
                                      writer={"thread_count": 1, "cuda": False})

    # four ranks, two writer threads per rank
    for name, variant, expect in (("four_ranks", None, "ok"), ("gap", "gap", "gap"),
                                  ("overlap", "overlap", "overlap"),
                                  ("missing_distcp", None, "missing_file"),
                                  ("four_ranks_zstd", None, "ok")):
        book = Book()
        states = four_rank_states(book, variant=variant)
        d = fresh(name)
        md = dcp_save(d, states, checkpoint_id="/ckpt/" + name, thread_count=2,
                      allow_invalid=variant is not None,
                      transforms=["stream.zstd/1"] if name.endswith("zstd") else ())
        extra = {}
        if variant == "gap":
            # rows [start, stop) along dim 0 that no chunk covers
            extra["gap"] = {"fqn": "model.layers.0.w_uneven", "dim": 0, "start": 9, "stop": 10}
        if variant == "overlap":
            # rows [start, stop) along dim 0 that two chunks cover
            extra["overlap"] = {"fqn": "model.layers.0.w_uneven", "dim": 0, "start": 2,
                                "stop": 3}
        if name == "missing_distcp":
            victim = "__2_0.distcp"
            os.remove(os.path.join(d, victim))
            extra["missing_file"] = victim
        fixtures[name] = describe(name, d, md, book, _byte_values(states), expect=expect,
                                  world_size=4, torch_stream="1.13", metadata_layout="2.4+",
                                  writer={"thread_count": 2, "cuda": False}, **extra)

    # one byte flipped inside a stored tensor's data/0 record
    book = Book()
    sd = one_rank_state(book)
    d = fresh("bad_crc")
    md = dcp_save(d, [sd], checkpoint_id="/ckpt/bad_crc")
    info = md.storage_data[MetadataIndex("model.embed.weight", (0, 0))]
    with open(os.path.join(d, info.relative_path), "r+b") as f:
        f.seek(info.offset)
        stream = f.read(info.length)
        with zipfile.ZipFile(io.BytesIO(stream)) as z:
            zi = z.getinfo("archive/data/0")
        name_len, extra_len = struct.unpack("<HH", stream[zi.header_offset + 26:
                                                          zi.header_offset + 30])
        at = info.offset + zi.header_offset + 30 + name_len + extra_len + 5
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 0xFF]))
    fixtures["bad_crc"] = describe("bad_crc", d, md, book, _byte_values([sd]), expect="bad_crc",
                                   world_size=1, torch_stream="1.13", metadata_layout="2.4+",
                                   writer={"thread_count": 1, "cuda": False}, corrupted={"fqn": "model.embed.weight",
                                              "file": info.relative_path,
                                              "file_offset": at})

    # hostile .metadata files (real .distcp files beside them)
    touch = "touch " + shlex.quote(marker)
    attacks = {
        "hostile": _OsSystem(touch),
        "hostile_getattr": _Call(_GetAttr(pathlib.PosixPath, "touch"),
                                 (pathlib.PosixPath(marker),)),
        "hostile_getattr_os": _Call(_GetAttr(_Import("os"), "system"), (touch,)),
    }
    for name, payload in attacks.items():
        book = Book()
        sd = one_rank_state(book)
        d = fresh(name)
        md = dcp_save(d, [sd], checkpoint_id="/ckpt/" + name)
        md.planner_data["step"] = payload
        with open(os.path.join(d, ".metadata"), "wb") as f:
            f.write(_dump_hostile(md))
        fixtures[name] = {"dir": name, "expect": "reject", "marker": marker,
                          "files": {f: os.path.getsize(os.path.join(d, f))
                                    for f in sorted(os.listdir(d))}}

    print(json.dumps({"marker": marker, "metadata_protocol": METADATA_PROTOCOL,
                      "fixtures": fixtures}))


if __name__ == "__main__":
    main()
