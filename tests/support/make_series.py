#!/usr/bin/python3
"""A real training run (torch 1.13, a small MLP with batch norm, SGD) that
saves its state_dict with torch.save at five steps, for `--series`:
  - the first layer is frozen from the start (its weights never change);
  - batch norm's running statistics move, its num_batches_tracked (int64)
    counts;
  - the last checkpoint gains a key ("head.temperature");
  - "probe.values" is empty at the first step, then over a million
    elements (pieces past an empty leaf's end);
  - "half.weight" (float16) and "bf16.weight" (bfloat16, over two pieces)
    move at every step;
  - "probe.nan" gains NaNs at step 10 and an Inf at step 50 (the pieces
    holding them are counted apart from the all-finite ones);
  - the files are named so that only a natural sort orders them
    (step-5.pt before step-10.pt).
The expected figures are computed here from the saved tensors with numpy,
as core/include/tensordict/series.h defines them: over the finite values
decoded to float64, and against the step before where both have the key
with as many elements.

usage: make_series.py OUT_DIR  ->  JSON on stdout:
  {"steps": [file names in order], "keys": {key: [null | figures, ...]}}
"""
import json
import os
import sys

import numpy as np
import torch

STEPS = [0, 5, 10, 50, 100]


def figures(values, before):
    v = values.astype(np.float64).ravel()
    finite = v[np.isfinite(v)]
    out = {"count": int(v.size), "nan": int(np.isnan(v).sum()), "inf": int(np.isinf(v).sum())}
    if finite.size:
        out.update(norm=float(np.sqrt(np.sum(finite * finite))), mean=float(finite.mean()),
                   std=float(finite.std()), min=float(finite.min()), max=float(finite.max()))
    else:
        out.update(norm=None, mean=None, std=None, min=None, max=None)
    out.update(max_abs_delta=None, changed_fraction=None, cosine=None)
    if before is not None and before.size == v.size:
        a = before.astype(np.float64).ravel()
        same = (a == v) | (np.isnan(a) & np.isnan(v))
        out["changed_fraction"] = float(np.mean(~same)) if v.size else 0.0
        both = np.isfinite(a) & np.isfinite(v)
        out["max_abs_delta"] = float(np.max(np.abs(v[both] - a[both]))) if both.any() else 0.0
        na, nb = np.sum(a[both] ** 2), np.sum(v[both] ** 2)
        out["cosine"] = float(np.sum(a[both] * v[both]) / (np.sqrt(na) * np.sqrt(nb))) \
            if na > 0 and nb > 0 else None
    return out


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(35)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16),
                                torch.nn.ReLU(), torch.nn.Linear(16, 4))
    for p in model[0].parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
    x, y = torch.randn(64, 8), torch.randn(64, 4)
    names, saved, done = [], [], 0
    for step in STEPS:
        for _ in range(step - done):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        done = step
        state = {k: v.clone() for k, v in model.state_dict().items()}
        if step == STEPS[-1]:
            state["head.temperature"] = torch.tensor([0.5, 2.0])
        state["probe.values"] = (torch.zeros(0) if step == 0 else
                                 torch.linspace(-1, 1, 1_100_000) * (1 + step / 100))
        moved = torch.linspace(-2, 2, 3000) * (1 + step / 7)
        state["half.weight"] = moved.to(torch.float16)
        state["bf16.weight"] = (torch.linspace(-5, 5, 70_000) + step / 3).to(torch.bfloat16)
        probe = torch.linspace(0, 1, 200_000) * (step + 1)
        if step == 10:
            probe[[3, 70_000, 199_999]] = float("nan")
        if step == 50:
            probe[131_072] = float("inf")
        state["probe.nan"] = probe
        name = "step-%d.pt" % step
        torch.save(state, os.path.join(out_dir, name))
        names.append(name)
        # numpy has no bfloat16: widened to float32, which is exact.
        saved.append({k: (v.float() if v.dtype == torch.bfloat16 else v).numpy()
                      for k, v in state.items()})

    keys = []
    for state in saved:
        keys += [k for k in state if k not in keys]
    expected = {}
    for key in keys:
        column, before = [], None
        for state in saved:
            if key not in state:
                column.append(None)
                before = None
                continue
            column.append(figures(state[key], before))
            before = state[key].astype(np.float64).ravel()
        expected[key] = column
    print(json.dumps({"steps": names, "keys": expected}))


if __name__ == "__main__":
    main()
