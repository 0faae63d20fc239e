"""Statistics of a raw little-endian file with numpy, for comparison.

usage: numpy_stats.py FILE DTYPE COUNT BINS
Prints JSON: count, nans, infs, zeros, min, max, mean, std (of finite values,
float64; population, ddof=0), sample_std (ddof=1, as torch.std), histogram (numpy.histogram of the finite values as float64 over
[min, max] with BINS bins; integers: bins of whole numbers, at most BINS of them,
edges halfway between integers, so each bin holds as many values as the next).
"""
import math
import json
import sys

import numpy as np

path, dtype, count, bins = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
raw = np.fromfile(path, dtype=np.dtype(dtype), count=count)
a = raw.astype(np.float64)
finite = a[np.isfinite(a)]
lo, hi = float(finite.min()), float(finite.max())
if np.issubdtype(raw.dtype, np.integer) or raw.dtype == np.bool_:
    values = hi - lo + 1
    width = math.ceil(values / bins)
    edges = lo - 0.5 + width * np.arange(math.ceil(values / width) + 1)
    hist, _ = np.histogram(finite, bins=edges)
else:
    hist, _ = np.histogram(finite, bins=bins, range=(lo, hi) if lo < hi else (lo - 0.5, hi + 0.5))
json.dump({
    "count": int(a.size), "nans": int(np.isnan(a).sum()), "infs": int(np.isinf(a).sum()),
    "zeros": int((a == 0).sum()), "min": lo, "max": hi, "mean": float(finite.mean()),
    "std": float(finite.std()), "sample_std": float(finite.std(ddof=1)), "histogram": [int(h) for h in hist],
}, sys.stdout)
