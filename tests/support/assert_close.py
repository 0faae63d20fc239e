#!/usr/bin/python3
"""The oracle for tdstudio's comparison engine: torch.testing.assert_close.

Loads two raw C-order arrays (a leaf's .memmap bytes) and runs
torch.testing.assert_close(actual, expected, rtol, atol, equal_nan,
check_dtype=False) on them, then prints what it found as JSON:

  {"equal": bool, "mismatched": N, "numel": M, "max_abs": x, "max_rel": x,
   "first_index": [...], "message": "...", "message_mismatched": N,
   "message_max_abs": x, "message_max_rel": x}

The counts and maxima are recomputed the way assert_close computes its
message (torch/testing/_comparison.py, make_tensor_mismatch_msg): both sides
promoted to their common dtype and then to float64 / int64 / complex128, the
mismatches are ~torch.isclose(...), the absolute difference |a - b| and the
relative one |a - b| / |b| are taken over the mismatches. Two deliberate
differences from the message, as tdstudio's engine documents them: a NaN
difference (an element with NaN on a side, or inf against inf in the relative
difference) is counted but left out of the maxima, where torch.max would
return NaN; and the relative difference of integers is computed in float64
(torch divides in the default float32). The message's own "Mismatched
elements: N / M" must agree with N (the script fails otherwise), and its
greatest differences with ours wherever it reports no NaN: the message_*
fields carry them so that the caller can check too. Non-finite numbers are
written as the strings "inf", "-inf" and "nan" (the output is strict JSON).

usage:
  assert_close.py A_FILE A_DTYPE B_FILE B_DTYPE SHAPE RTOL ATOL EQUAL_NAN
      SHAPE as JSON ("[4, 2]"), dtypes as numpy names (float32, int64, ...),
      EQUAL_NAN 0/1 or false/true; prints one result
  assert_close.py --manifest CASES.json
      CASES.json: a list of {"name", "a", "a_dtype", "b", "b_dtype", "shape",
      "rtol", "atol", "equal_nan"}; prints {name: result, ...} (one Python
      start for many cases)
"""

import json
import math
import re
import sys

import numpy as np
import torch


def number(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def load(path, dtype, shape):
    array = np.fromfile(path, dtype=np.dtype(dtype))
    count = int(np.prod(shape)) if shape else 1
    if array.size < count:
        raise SystemExit(f"{path}: {array.size} elements, {count} needed")
    return torch.from_numpy(array[:count].reshape(shape).copy())


def unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, mod = divmod(flat, size)
        index.append(mod)
    return list(reversed(index))


def message_float(text, what):
    m = re.search(r"Greatest " + what + r" difference: (\S+) at index", text)
    return float(m.group(1)) if m else None


def compare(a_file, a_dtype, b_file, b_dtype, shape, rtol, atol, equal_nan):
    actual = load(a_file, a_dtype, shape)
    expected = load(b_file, b_dtype, shape)
    message = ""
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                   check_dtype=False)
        equal = True
    except AssertionError as e:
        equal = False
        message = str(e)

    # As assert_close: the common dtype, then the comparison dtype of its category.
    common = torch.promote_types(actual.dtype, expected.dtype)
    if common.is_complex:
        wide = torch.complex128
    elif common.is_floating_point:
        wide = torch.float64
    else:
        wide = torch.int64
    a = actual.to(common).to(wide).flatten()
    b = expected.to(common).to(wide).flatten()
    mismatches = ~torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    count = int(mismatches.sum().item())

    abs_diff = (a - b).abs().to(torch.float64)[mismatches]
    rel_diff = abs_diff / b.abs().to(torch.float64)[mismatches]
    abs_diff = abs_diff[~abs_diff.isnan()]
    rel_diff = rel_diff[~rel_diff.isnan()]
    max_abs = abs_diff.max().item() if abs_diff.numel() else 0.0
    max_rel = rel_diff.max().item() if rel_diff.numel() else 0.0
    flat = int(mismatches.nonzero()[0].item()) if count else -1

    result = {
        "equal": equal,
        "mismatched": count,
        "numel": int(a.numel()),
        "max_abs": number(max_abs),
        "max_rel": number(max_rel),
        "first_flat_index": flat,
        "first_index": unravel(flat, list(shape)) if count else [],
        "message": message,
    }
    if equal != (count == 0):
        raise SystemExit(f"assert_close said equal={equal} but isclose finds {count} mismatches")
    if message and list(shape):  # 0-d tensors get the scalar message, without counts
        m = re.search(r"Mismatched elements: (\d+) / (\d+)", message)
        if not m:
            raise SystemExit("no 'Mismatched elements' in the message: " + message)
        if int(m.group(1)) != count or int(m.group(2)) != a.numel():
            raise SystemExit(f"message says {m.group(1)} / {m.group(2)}, recomputed {count} / "
                             f"{a.numel()}")
        result["message_mismatched"] = int(m.group(1))
        for what, ours in (("absolute", max_abs), ("relative", max_rel)):
            theirs = message_float(message, what)
            result["message_max_" + what[:3]] = number(theirs)
            # Where the message has no NaN, it must agree with ours (float32 for
            # the relative difference of integers).
            if theirs is not None and not math.isnan(theirs) and not (
                    theirs == ours or abs(theirs - ours) <= 1e-6 * abs(ours)):
                raise SystemExit(f"message's greatest {what} difference {theirs} != {ours}")
    return result


def flag(text):
    return str(text).lower() in ("1", "true", "yes")


def main(argv):
    if len(argv) == 3 and argv[1] == "--manifest":
        with open(argv[2]) as f:
            cases = json.load(f)
        out = {}
        for c in cases:
            out[c["name"]] = compare(c["a"], c["a_dtype"], c["b"], c["b_dtype"], c["shape"],
                                     float(c["rtol"]), float(c["atol"]), flag(c["equal_nan"]))
        print(json.dumps(out, allow_nan=False))
        return
    if len(argv) != 9:
        raise SystemExit(__doc__)
    print(json.dumps(compare(argv[1], argv[2], argv[3], argv[4], json.loads(argv[5]),
                             float(argv[6]), float(argv[7]), flag(argv[8])), allow_nan=False))


if __name__ == "__main__":
    main(sys.argv)
