#!/usr/bin/python3
"""Checkpoints of quantized tensors, written by the real torch (Debian's
python3-torch 1.13), sound and damaged, for --check.

usage: make_quantized.py OUTDIR

Sound (torch.save wrote them, and torch.load reads each back here, with
the same integers, scales and zero points):
  state.pt          qint8, quint8 and qint32 per-tensor, qint8 per-channel
                    (double scales, int zero points) and quint8 per-channel
                    with float zero points, a view, quint4x2 and quint2x4
                    (packed) and a scalar, beside a plain float tensor
  state_legacy.pt   the same, torch.save(_use_new_zipfile_serialization=False)
  model.pt          a quantized nn.Linear's state_dict (packed params)

Damaged, each with one thing wrong:
  cut_entry.pt      the zip entry of "q8" one byte short (a consistent zip,
                    rewritten by zipfile)
  cut_legacy.pt     a legacy checkpoint cut one byte short in its last
                    storage, a quantized one
  unknown_type.pt   a legacy checkpoint whose "torch.QInt8Storage" became
                    "torch.QInt7Storage" (torch.load fails: no such class)
  unknown_call.pt   the same, its "_rebuild_qtensor" become "_rebuild_ptensor"
                    (torch.load fails: no such function)
  past_storage.pt   sizes [4, 7] over a storage of 24 values
  offset_past.pt    offset 1 with sizes [4, 6] over 24 values
  packed_past.pt    quint4x2 sizes [2, 9] (10 bytes) over 6 bytes
  packed_offset.pt  quint4x2 at offset 128 (one bit flipped from 0)
  packed_strides.pt quint4x2 with strides (100000, 1)
  requires_grad.pt  requires_grad True (torch.load refuses it)
  few_scales.pt     3 scales and zero points for 4 channels
  scales_stride0.pt the scales a stride-0 view of one value (torch.load reads
                    memory that is not in the file for the others)
  scales_long.pt    int64 scales (torch.load fails)
  bad_axis.pt       per-channel along dimension 2 of a 2-D tensor
  bad_scheme.pt     torch.per_tensor_symmetric (torch.load refuses it)
  float_zero.pt     a per-tensor zero point of 3.0 (torch.load refuses it)
torch 1.13 loads past_storage, offset_past, packed_offset, packed_strides,
few_scales, scales_stride0 and bad_axis without a word (its _rebuild_qtensor checks none of it); torch.save never writes
them, and their values are not in the file or have no scale.
"""
import collections
import io
import sys
import zipfile

import torch

out = sys.argv[1]
torch.manual_seed(0)

x = torch.randn(4, 6)
sound = {
    "plain": torch.arange(5.0),
    "q8": torch.quantize_per_tensor(x, 0.1, 3, torch.qint8),
    "qu8": torch.quantize_per_tensor(x, 0.05, 128, torch.quint8),
    "q32": torch.quantize_per_tensor(x, 0.001, -7, torch.qint32),
    "qc": torch.quantize_per_channel(
        x, torch.rand(4, dtype=torch.double) + 0.1, torch.tensor([0, 1, -1, 2]), 0, torch.qint8
    ),
    "qf": torch.quantize_per_channel(
        x, torch.rand(6) + 0.1, torch.rand(6), 1, torch.quint8
    ),
    "q4": torch.quantize_per_tensor(torch.randn(2, 5), 0.1, 3, torch.quint4x2),
    "q2": torch.quantize_per_tensor(torch.randn(3, 3), 0.5, 1, torch.quint2x4),
    "scalar": torch.quantize_per_tensor(torch.tensor(1.5), 0.1, 0, torch.qint8),
}
sound["view"] = sound["q8"][1:3, 2:5]
assert sound["qf"].qscheme() == torch.per_channel_affine_float_qparams


def same(a, b):
    if not a.is_quantized:
        return torch.equal(a, b)
    if a.qscheme() == torch.per_tensor_affine:
        params = a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    else:
        params = (
            torch.equal(a.q_per_channel_scales(), b.q_per_channel_scales())
            and torch.equal(a.q_per_channel_zero_points(), b.q_per_channel_zero_points())
            and a.q_per_channel_axis() == b.q_per_channel_axis()
        )
    return params and a.dtype == b.dtype and torch.equal(a.int_repr(), b.int_repr())


torch.save(sound, f"{out}/state.pt")
torch.save(sound, f"{out}/state_legacy.pt", _use_new_zipfile_serialization=False)
for name in ("state.pt", "state_legacy.pt"):
    back = torch.load(f"{out}/{name}")
    assert back.keys() == sound.keys() and all(same(sound[k], back[k]) for k in sound), name

model = torch.nn.Sequential(torch.nn.Linear(6, 3))
model.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
prepared = torch.ao.quantization.prepare(model)
prepared(torch.randn(2, 6))
torch.save(torch.ao.quantization.convert(prepared).state_dict(), f"{out}/model.pt")
torch.load(f"{out}/model.pt")

# The zip rewritten with the entry of "q8" one byte short: every CRC-32
# is right, the storage is not.
# torch 1.13 names storages "0", "1", ... in the order it meets them.
q8_entry = "state/data/1"
with zipfile.ZipFile(f"{out}/state.pt") as z:
    assert z.read(q8_entry) == sound["q8"].int_repr().numpy().tobytes()
    with zipfile.ZipFile(f"{out}/cut_entry.pt", "w") as cut:
        for info in z.infolist():
            data = z.read(info)
            name = info.filename.replace("state/", "cut_entry/")
            cut.writestr(name, data[:-1] if info.filename == q8_entry else data)

only_quantized = {"q8": sound["q8"]}
buffer = io.BytesIO()
torch.save(only_quantized, buffer, _use_new_zipfile_serialization=False)
legacy = buffer.getvalue()
open(f"{out}/cut_legacy.pt", "wb").write(legacy[:-1])
assert legacy.count(b"QInt8Storage") == 1
open(f"{out}/unknown_type.pt", "wb").write(legacy.replace(b"QInt8Storage", b"QInt7Storage"))
assert legacy.count(b"_rebuild_qtensor") == 1
open(f"{out}/unknown_call.pt", "wb").write(legacy.replace(b"_rebuild_qtensor", b"_rebuild_ptensor"))


class Rebuilt:
    """Pickles as torch.save pickles a quantized tensor, with chosen arguments."""

    def __init__(self, *args, requires_grad=False):
        self.args = args + (requires_grad, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_qtensor, self.args)


q8, qc, q4 = sound["q8"], sound["qc"], sound["q4"]
per_tensor = (torch.per_tensor_affine, 0.1, 3)
scales, zeros = qc.q_per_channel_scales(), qc.q_per_channel_zero_points()
damaged = {
    "past_storage": Rebuilt(q8.storage(), 0, (4, 7), (7, 1), per_tensor),
    "offset_past": Rebuilt(q8.storage(), 1, (4, 6), (6, 1), per_tensor),
    "packed_past": Rebuilt(q4.storage(), 0, (2, 9), (9, 1), per_tensor),
    "packed_offset": Rebuilt(q4.storage(), 128, (2, 5), (5, 1), per_tensor),
    "packed_strides": Rebuilt(q4.storage(), 0, (2, 5), (100000, 1), per_tensor),
    "requires_grad": Rebuilt(q8.storage(), 0, (4, 6), (6, 1), per_tensor, requires_grad=True),
    "few_scales": Rebuilt(
        qc.storage(), 0, (4, 6), (6, 1), (torch.per_channel_affine, scales[:3], zeros[:3], 0)
    ),
    "scales_stride0": Rebuilt(
        qc.storage(), 0, (4, 6), (6, 1),
        (torch.per_channel_affine, scales[:1].expand(4), zeros, 0),
    ),
    "scales_long": Rebuilt(
        qc.storage(), 0, (4, 6), (6, 1), (torch.per_channel_affine, zeros, zeros, 0)
    ),
    "bad_axis": Rebuilt(
        qc.storage(), 0, (4, 6), (6, 1), (torch.per_channel_affine, scales, zeros, 2)
    ),
    "bad_scheme": Rebuilt(q8.storage(), 0, (4, 6), (6, 1), (torch.per_tensor_symmetric, 0.1, 3)),
    "float_zero": Rebuilt(q8.storage(), 0, (4, 6), (6, 1), (torch.per_tensor_affine, 0.1, 3.0)),
}
for name, rebuilt in damaged.items():
    torch.save({"t": rebuilt}, f"{out}/{name}.pt")
