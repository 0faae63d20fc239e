#!/usr/bin/python3
"""Checkpoints whose tensors sit inside Python objects, written by the real
torch (Debian's python3-torch 1.13), sound and damaged, for --check.

usage: make_object_pickles.py OUTDIR

Sound (torch.save wrote them; torch.load reads each back here). OUTDIR/
expected.json lists, for each, every tensor's key path as tdstudio names it
and its values as torch.load gives them:
  optimizer.pt      torch.save of an Adam optimizer after one step: its
                    state is a collections.defaultdict keyed by parameters
  defaultdict.pt    {"dd": defaultdict(list, a=tensor)}
  subclasses.pt     a list subclass and a dict subclass holding tensors
                    (protocol 2: NEWOBJ, then APPENDS and SETITEMS)
  subclasses_p1.pt  the same at protocol 1 (copyreg._reconstructor with
                    the base's value)
  state_dict.pt     an nn.Module's state_dict: an OrderedDict that BUILD
                    gives its _metadata
  tensor_key.pt     a dict keyed by a tensor that is nowhere else (no leaf)
  untyped.pt        {"ust": an UntypedStorage of the bytes 0 to 7, "view": a
                    uint8 tensor over it (one storage key named as
                    torch.storage.UntypedStorage and as torch.ByteStorage),
                    "ba": bytearray(b"xy"), "e": bytearray()}
  scheduler.pt      a OneCycleLR's state_dict: its anneal_func, a bound
                    method of the scheduler (with its optimizer and so the
                    parameters), whose __dict__ holds it again (a loop,
                    shown as a reference)
  module_legacy.pt  a whole nn.Linear in the legacy layout, which keeps its
                    class's source as a ('module', ...) persistent id
  tensor_subclass.pt  tensor subclasses (torch._tensor._rebuild_from_type_v2):
                    one with attributes (an object of the subclass, its
                    tensor as `data`), a view (storage offset 2) without,
                    one with __slots__ (state (__dict__, slots)), and a
                    plain tensor with an attribute as torch 2 pickles it
                    (torch/_tensor.py, Tensor.__reduce_ex__, v2.1.0: the
                    type torch.Tensor and the state; torch 1.13 drops it)
  version_plus.pt   {"a": 2 floats}, its version record "+3" (torch reads
                    it with C++'s stoull); version_padded.pt: 5,000 spaces
                    before "3"; version_zeros.pt: 21 zeros before "3";
                    version_text.pt: "3abc"
NumPy arrays, written by torch.save of dicts of them (numpy's pickles:
numpy.core.multiarray._reconstruct and BUILD). OUTDIR/numpy.json lists, for
each file, each array of a dtype tdstudio reads: its torch dtype, shape and
C-ordered little-endian bytes (hex), as numpy gives them:
  numpy_arrays.pt   protocol 2 (bytes as _codecs.encode of latin-1 text):
                    float32, a Fortran-ordered float64, big-endian int32
                    and complex64, bool, uint16, int8, float16, a 0-d
                    array, a zero-size one, np.random.get_state()'s
                    uint32 keys, and arrays tdstudio leaves as objects
                    (str, Python objects, records)
  numpy_arrays_p4.pt  the same at protocol 4 (BINBYTES)
  numpy_arrays_p5.pt  the same at protocol 5 (numpy's _frombuffer)
  numpy_scalars.pt  NumPy scalars (float64, float32, int64, uint64 2**64-1,
                    bool_) and a dict keyed by np.int64 (a label map)
Sound, with tensors where tdstudio does not look (an unplaced warning):
  attribute.pt      an OrderedDict with two attributes (BUILD), two views
                    of one storage
  extra_entry.pt    a checkpoint with a storage entry (data/9) its pickle
                    never loads (torch.load ignores it)
  tensor_extra_entry.pt  the same where the checkpoint is one tensor
Damaged: torch.load fails on each (asserted here):
  ordereddict_args.pt      collections.OrderedDict called with 7 arguments,
                           a tensor the first
  ordereddict_item.pt      OrderedDict([tensor of 3]): an item not a pair
  build_on_global.pt       BUILD of {"t": tensor} on torch.float32
  build_on_dict.pt         BUILD of {"t": tensor} on a dict
  unhashable_key.pt        a dict keyed by a list, its value a tensor
  append_to_dict.pt        APPEND of a tensor to a dict
  set_of_list.pt           frozenset([[1], tensor]): an unhashable item
  additems_frozenset.pt    ADDITEMS of a tensor to a frozenset
  call_str.pt              REDUCE that calls the str "abc" with a tensor
  args_list.pt             REDUCE of collections.OrderedDict with a list of
                           arguments (a tensor), not a tuple
  build_list_state.pt      BUILD of [tensor] on an OrderedDict
  parameter_int_grad.pt    _rebuild_parameter(tensor, 1, OrderedDict())
  bad_utf8_str.pt          a str (SHORT_BINUNICODE) of the bytes c3 28
  bad_utf8_global.pt       GLOBAL "torch\xff float32"
  int_requires_grad.pt     {"i": arange(3)}, its requires_grad flipped to True
                           (torch.load fails: only floating point and
                           complex tensors can require grad)
  key_sizes.pt             {"a": 2 floats, "b": 4 floats}, b's storage key
                           made a's (torch.load fails: a view past it)
  from_type_of_dict.pt     _rebuild_from_type_v2 of OrderedDict([("t", tensor)])
                           (torch.load: a dict has no as_subclass)
  from_type_str.pt         _rebuild_from_type_v2 whose type is the str "Sub"
  rebuild_misspelled.pt    {"a": 2 floats}, _rebuild_tensor_v2 spelled
                           _rebuild_tensOr_v2 (torch.load: no such function)
  numpy_short_data.pt      a float32 [2, 3] NumPy array with 20 bytes of data
                           (numpy: "buffer size does not match array size")
  no_version.pt            {"a": 2 floats} without its version record
  version_99.pt            the same, its version record "99"
  version_negative.pt      the same, "-3"
  version_huge.pt          the same, 23 nines (past 64 bits)
  frame_length.pt          a protocol 4 pickle whose first FRAME's length
                           has its top byte set (torch.load: truncated)
Damaged, though torch.load reads it:
  key_dtypes.pt            {"a": 4 floats, "b": 4 int32}, b's storage key made
                           a's: torch.load gives b as a's floats (the first
                           naming of a key wins)
The damaged ones are written by torch.save through a pickler that writes
chosen opcodes in place of a marker object (tensors still go through
torch's persistent ids).
"""
import collections
import json
import os
import pickle
import sys
import types
import zipfile

import torch

out = sys.argv[1]
torch.manual_seed(0)
expected = {}


def values(t):
    return t.detach().reshape(-1).tolist()


def key_of(p, path):
    """How tdstudio names a dict key that is a tensor: with the key of its
    storage, the entry of the file saved at `path` that holds its bytes."""
    with zipfile.ZipFile(path) as z:
        keys = [n.rsplit("/", 1)[1] for n in z.namelist()
                if "/data/" in n and z.read(n) == p.detach().numpy().tobytes()]
    assert len(keys) == 1, keys
    return "<%s %s %s of storage %s>" % (type(p).__name__, p.dtype, list(p.shape), keys[0])


def save(name, obj, tensors=None, protocol=2, legacy=False):
    torch.save(obj, out + "/" + name, pickle_protocol=protocol,
               _use_new_zipfile_serialization=not legacy)
    torch.load(out + "/" + name)  # torch reads it back
    if tensors is not None:
        expected[name] = {k: values(v) for k, v in tensors.items()}


class ReduceTo:
    """Pickled as the call `reduced` names."""

    def __init__(self, *reduced):
        self.reduced = reduced

    def __reduce__(self):
        return self.reduced


class MyList(list):
    pass


class MyDict(dict):
    pass


# An optimizer's state: a defaultdict keyed by the parameters.
model = torch.nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters())
model(torch.randn(4, 3)).sum().backward()
opt.step()
save("optimizer.pt", opt)
tensors = {}
for i, p in enumerate(opt.param_groups[0]["params"]):
    tensors["param_groups/0/params/%d" % i] = p
    for field, v in opt.state[p].items():
        tensors["state/dictitems/%s/%s" % (key_of(p, out + "/optimizer.pt"), field)] = v
expected["optimizer.pt"] = {k: values(v) for k, v in tensors.items()}

dd = collections.defaultdict(list)
dd["a"] = torch.arange(3.0)
save("defaultdict.pt", {"dd": dd}, {"dd/dictitems/a": dd["a"]})

lists = {"l": MyList([torch.ones(2), torch.arange(4.0)]), "d": MyDict(a=torch.full((2,), 7.0))}
tensors = {
    "l/listitems/0": lists["l"][0],
    "l/listitems/1": lists["l"][1],
    "d/dictitems/a": lists["d"]["a"],
}
save("subclasses.pt", lists, tensors)
save("subclasses_p1.pt", lists, tensors, protocol=1)

sd = torch.nn.Linear(2, 2).state_dict()
assert hasattr(sd, "_metadata")
save("state_dict.pt", sd, {"weight": sd["weight"], "bias": sd["bias"]})

save("tensor_key.pt", {torch.arange(2.0): "value"}, {})

sched = torch.optim.lr_scheduler.OneCycleLR(torch.optim.AdamW(model.parameters()), max_lr=0.01,
                                            total_steps=10)
# A bare untyped storage (torch 1.13 pickles its type as torch.storage.UntypedStorage).
bytes8 = torch.arange(8, dtype=torch.uint8)
untyped = bytes8.storage().untyped()
save("untyped.pt", {"ust": untyped, "view": bytes8, "ba": bytearray(b"xy"), "e": bytearray()})
assert list(torch.load(out + "/untyped.pt")["ust"]) == list(range(8))

# The bound method keeps the scheduler, and so its optimizer's parameters.
params = "anneal_func/args/0/optimizer/param_groups/0/params/"
save("scheduler.pt", sched.state_dict(),
     {params + "0": model.weight, params + "1": model.bias})
assert torch.load(out + "/scheduler.pt")["anneal_func"].__self__.anneal_func

linear = torch.nn.Linear(2, 3)
save("module_legacy.pt", {"m": linear},
     {"m/_parameters/weight": linear.weight, "m/_parameters/bias": linear.bias}, legacy=True)

class Sub(torch.Tensor):
    pass


class Slotted(torch.Tensor):
    __slots__ = ("tag",)


sub = torch.arange(6.0).reshape(2, 3).as_subclass(Sub)
sub.meta = "x"
sub.w = torch.full((2,), 3.0)
view = torch.arange(10.0)[2:8].reshape(3, 2).as_subclass(Sub)
assert view.storage_offset() == 2
# Pickled with the state {} as under Python 3.10 and older: 3.11's default
# __getstate__ gives None, which torch 1.13 itself fails to load.
view_func, view_args = view._reduce_ex_internal(2)
slotted = torch.arange(4.0).as_subclass(Slotted)
slotted.tag = torch.ones(3)
slotted.label = "s"  # torch 1.13 fails on a state of slots alone: (None, slots)
plain = torch.arange(3.0) * 2
func, args = plain._reduce_ex_internal(2)
save("tensor_subclass.pt", {"sub": sub, "slotted": slotted,
                            "view": ReduceTo(torch._tensor._rebuild_from_type_v2,
                                             (view_func, Sub, view_args, {})),
                            "plain": ReduceTo(torch._tensor._rebuild_from_type_v2,
                                              (func, torch.Tensor, args, {"note": "y"}))},
     {"sub/data": sub, "sub/w": sub.w, "view": view, "slotted/data": slotted,
      "slotted/tag": slotted.tag, "plain/data": plain})
loaded = torch.load(out + "/tensor_subclass.pt")
assert type(loaded["sub"]) is Sub and loaded["sub"].meta == "x" and loaded["slotted"].tag.sum() == 3
assert isinstance(loaded["slotted"].__getstate__(), tuple)
assert torch.equal(loaded["view"], view) and torch.equal(loaded["plain"], plain)

import numpy as np

arrays = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
    "fortran": np.asfortranarray(np.arange(6.0).reshape(3, 2) ** 2),
    "big_i32": np.arange(-2, 2, dtype=">i4").reshape(2, 2),
    "big_c64": np.array([1 + 2j, -3.5 + 0.25j], dtype=">c8"),
    "bool": np.array([True, False, True]),
    "u16": np.array([0, 1, 65535], dtype=np.uint16),
    "i8": np.array([-128, 0, 127], dtype=np.int8),
    "f16": np.array([0.5, -2.0, 65504.0], dtype=np.float16),
    "scalar": np.array(3.25),
    "empty": np.zeros((0, 3), dtype=np.float32),
    "rng": np.random.RandomState(0).get_state(),
    "strings": np.array(["ab", "cde"]),
    "objects": np.array([1, "x"], dtype=object),
    "records": np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]),
}
assert arrays["fortran"].flags.f_contiguous and not arrays["fortran"].flags.c_contiguous
numpy_expected = {}
for name, protocol in (("numpy_arrays.pt", 2), ("numpy_arrays_p4.pt", 4),
                       ("numpy_arrays_p5.pt", 5)):
    save(name, arrays, protocol=protocol)
    loaded = torch.load(out + "/" + name)
    assert np.array_equal(loaded["fortran"], arrays["fortran"])
    leaves = {}
    for key, a in list(arrays.items()) + [("rng/1", arrays["rng"][1])]:
        if key in ("rng", "strings", "objects", "records"):
            continue
        c = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        # numpy's dtype names are torch's for these (float32, ..., bool, uint16).
        leaves[key] = {"dtype": "torch." + a.dtype.name, "shape": list(a.shape),
                       "hex": c.tobytes().hex()}
    numpy_expected[name] = leaves
save("numpy_scalars.pt", {"metric": np.float64(0.93), "f32": np.float32(0.25),
                          "step": np.int64(-3), "big": np.uint64(2**64 - 1),
                          "flag": np.bool_(True), "labels": {np.int64(0): "cat", np.int64(1): "dog"}})
with open(out + "/numpy.json", "w") as f:
    json.dump(numpy_expected, f, indent=1)

od = collections.OrderedDict(w=torch.arange(2.0))
od.extra = torch.arange(5.0)
od.tail = od.extra[2:]
save("attribute.pt", od)
assert torch.equal(torch.load(out + "/attribute.pt").tail, od.tail)


# Damaged files: a marker object pickled as chosen opcodes.
class Raw:
    def __init__(self, *parts):
        self.parts = parts  # bytes are written as they are, anything else pickled


class RawPickler(pickle._Pickler):
    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, Raw):
            for part in obj.parts:
                if isinstance(part, bytes):
                    self.write(part)
                else:
                    self.save(part)
            return
        super().save(obj, save_persistent_id)


raw_module = types.SimpleNamespace(Pickler=RawPickler, __name__="raw_pickle")


t = torch.arange(3.0)
t_func, t_args = t._reduce_ex_internal(2)
damaged = {
    "ordereddict_args.pt": ReduceTo(collections.OrderedDict, (t, 1, 2, 3, 4, 5, 6)),
    "ordereddict_item.pt": ReduceTo(collections.OrderedDict, ([t],)),
    "build_on_global.pt": Raw(b"ctorch\nfloat32\n", {"t": t}, pickle.BUILD),
    "build_on_dict.pt": Raw(pickle.EMPTY_DICT, {"t": t}, pickle.BUILD),
    "unhashable_key.pt": Raw(pickle.EMPTY_DICT, pickle.MARK, [1], t, pickle.SETITEMS),
    "append_to_dict.pt": Raw(pickle.EMPTY_DICT, t, pickle.APPEND),
    "set_of_list.pt": ReduceTo(frozenset, ([[1], t],)),
    "additems_frozenset.pt": Raw(pickle.MARK, 1, pickle.FROZENSET, pickle.MARK, t,
                                 pickle.ADDITEMS),
    "call_str.pt": Raw("abc", (t,), pickle.REDUCE),
    "args_list.pt": Raw(b"ccollections\nOrderedDict\n", [t], pickle.REDUCE),
    "build_list_state.pt": ReduceTo(collections.OrderedDict, (), [t]),
    "parameter_int_grad.pt": ReduceTo(torch._utils._rebuild_parameter,
                                      (t, 1, collections.OrderedDict())),
    "bad_utf8_str.pt": Raw(pickle.SHORT_BINUNICODE + b"\x02\xc3\x28"),
    "bad_utf8_global.pt": Raw(b"ctorch\xff\nfloat32\n"),
    "numpy_short_data.pt": ReduceTo(np.core.multiarray._reconstruct, (np.ndarray, (0,), b"b"),
                                    (1, (2, 3), np.dtype("float32"), False, bytes(20))),
    "from_type_of_dict.pt": ReduceTo(torch._tensor._rebuild_from_type_v2,
                                     (collections.OrderedDict, Sub, ([("t", t)],), None)),
    "from_type_str.pt": ReduceTo(torch._tensor._rebuild_from_type_v2,
                                 (t_func, "Sub", t_args, None)),
}
for name, obj in damaged.items():
    torch.save({"x": obj, "plain": torch.ones(1)}, out + "/" + name, pickle_module=raw_module,
               pickle_protocol=2)
    try:
        torch.load(out + "/" + name)
    except Exception:
        continue
    sys.exit(name + ": torch.load read it")

def rewrite(source, name, change, extra=None, drop=()):
    """The checkpoint torch.save wrote for `source`, its pickle changed by
    `change`, `extra` entries added (or replaced) and `drop` left out, the
    zip rewritten around it."""
    folder = name[:-3]
    torch.save(source, out + "/source.pt", pickle_protocol=4)
    with zipfile.ZipFile(out + "/source.pt") as z:
        entries = {folder + "/" + n.split("/", 1)[1]: z.read(n) for n in z.namelist()}
    entries[folder + "/data.pkl"] = change(entries[folder + "/data.pkl"])
    for entry, data in (extra or {}).items():
        entries[folder + "/" + entry] = data
    for entry in drop:
        del entries[folder + "/" + entry]
    with zipfile.ZipFile(out + "/" + name, "w") as z:
        for entry, data in entries.items():
            z.writestr(entry, data)


def fails(name):
    try:
        torch.load(out + "/" + name)
    except Exception:
        return
    sys.exit(name + ": torch.load read it")


# NEWFALSE (the tensor's requires_grad, its first bool) to NEWTRUE.
rewrite({"i": torch.arange(3)}, "int_requires_grad.pt",
        lambda p: p.replace(pickle.NEWFALSE, pickle.NEWTRUE, 1))
fails("int_requires_grad.pt")
# The second storage's key, "1", made the first's.
rewrite({"a": torch.arange(2.0), "b": torch.arange(4.0)}, "key_sizes.pt",
        lambda p: p.replace(b"\x8c\x011", b"\x8c\x010", 1))
fails("key_sizes.pt")
# b's IntStorage key, "1", made the FloatStorage a's: torch.load reads b as
# a's four floats (the first naming), though torch.save never writes this.
rewrite({"a": torch.arange(4.0), "b": torch.arange(4, dtype=torch.int32)}, "key_dtypes.pt",
        lambda p: p.replace(b"\x8c\x011", b"\x8c\x010", 1))
assert torch.load(out + "/key_dtypes.pt")["b"].dtype == torch.float32
rewrite({"a": torch.arange(2.0)}, "rebuild_misspelled.pt",
        lambda p: p.replace(b"_rebuild_tensor_v2", b"_rebuild_tensOr_v2", 1))
fails("rebuild_misspelled.pt")
rewrite({"a": torch.arange(2.0)}, "frame_length.pt", lambda p: p[:10] + b"\x01" + p[11:])
fails("frame_length.pt")
rewrite({"a": torch.arange(2.0)}, "no_version.pt", lambda p: p, drop=("version",))
fails("no_version.pt")
rewrite({"a": torch.arange(2.0)}, "version_99.pt", lambda p: p, {"version": b"99\n"})
fails("version_99.pt")
# Version records torch reads as C++'s stoull reads them: a sign, padding
# past 4 KiB, more than 19 digits of leading zeros, text after the number.
for name, record in (("version_plus.pt", b"+3\n"), ("version_padded.pt", b" " * 5000 + b"3\n"),
                     ("version_zeros.pt", b"0" * 21 + b"3\n"), ("version_text.pt", b"3abc")):
    rewrite({"a": torch.arange(2.0)}, name, lambda p: p, {"version": record})
    assert torch.equal(torch.load(out + "/" + name)["a"], torch.arange(2.0))
    expected[name] = {"a": [0.0, 1.0]}
# ... and those it refuses: a negative version, one past 64 bits.
for name, record in (("version_negative.pt", b"-3\n"), ("version_huge.pt", b"9" * 23 + b"\n")):
    rewrite({"a": torch.arange(2.0)}, name, lambda p: p, {"version": record})
    fails(name)
rewrite({"a": torch.arange(2.0)}, "extra_entry.pt", lambda p: p,
        {"data/9": torch.arange(4.0).numpy().tobytes()})
assert torch.equal(torch.load(out + "/extra_entry.pt")["a"], torch.arange(2.0))
rewrite(torch.arange(2.0), "tensor_extra_entry.pt", lambda p: p,
        {"data/9": torch.arange(4.0).numpy().tobytes()})
assert torch.equal(torch.load(out + "/tensor_extra_entry.pt"), torch.arange(2.0))

os.remove(out + "/source.pt")
with open(out + "/expected.json", "w") as f:
    json.dump(expected, f, indent=1)
