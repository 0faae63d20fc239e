#!/usr/bin/python3
"""Writes TorchRL replay buffer dumps, and stacks of tensordict chunks, as
torchrl and tensordict write them, and prints what each holds as JSON.

torchrl cannot be installed here, so ReplayBuffer.dumps() is re-told below
in our own words, file by file, from pytorch/rl as stored:

- torchrl/data/replay_buffers/replay_buffers.py @ 662ba6750d67da1007a2010162f09e11631343cd
  (v0.13.3, dumps: storage/, sampler/, writer/, transform.t,
  buffer_metadata.json {"batch_size"}) and replay_buffers/base.py @
  ae9719f17b1517af5c2523a36c4616f003ee55cf (main: + "consume_after_n_samples",
  prefetch.pkl {"version": 1, "capacity": 0, "queue": ()});
- torchrl/data/replay_buffers/checkpointers.py (TensorStorageCheckpointer.dumps:
  storage.memmap(path), storage_metadata.json {"metadata": {}, "is_pytree":
  false, "len": n}) and storages.py / storages/tensor.py (LazyMemmapStorage
  preallocates every leaf at capacity on the first write; _len = min(_len +
  numel, max_size));
- torchrl/data/replay_buffers/writers.py @ v0.13.3 and writers/round_robin.py
  @ main (extend: index = arange(cursor, cursor + B) % capacity, cursor =
  (cursor + B) % capacity, write_count += B; metadata.json {"cursor"} in
  v0.13, {"cursor", "write_count"} on main);
- torchrl/data/replay_buffers/samplers.py @ v0.13.3 and samplers/prioritized.py
  @ main (PrioritizedSampler: new rows get (max_priority + eps) ** alpha,
  update_priority stores (p + eps) ** alpha and raises max_priority;
  dumps writes sumtree.memmap / mintree.memmap as float64 [max_capacity] of
  the trees' leaves, through torch.as_tensor of Python floats (float32), and
  sampler_metadata.json with every value cast to float, "_max_priority" as
  [priority, index], and "_schema_version": 1 on main); RandomSampler
  writes no sampler/ folder;
- torchrl/csrc/segment_tree.h (leaves start at the identity: 0 for the sum
  tree, numeric_limits<float>::max() for the min tree).

The storage tensordict's memmap layout (meta.json per level, a raw
<key>.memmap per leaf) follows tensordict 0.14's _td_memmap.py, as the
fixtures under tests/fixtures/tensordict-0.14 show it.

Every expected value is computed from a numpy model of the writes (the rows
in the order they were written), never from the files: the valid rows
oldest first are the last `len` rows written.

usage: make_replay.py OUT_DIR     JSON on stdout
"""
import hashlib
import json
import os
import pickle
import sys

import numpy as np
import torch

TD_TYPE = "<class 'tensordict._td.TensorDict'>"
NEWER = "torchrl after 0.13 (write_count)"  # write_count, _schema_version, prefetch.pkl
OLDER = "torchrl 0.3 to 0.13"
TORCH_DTYPE = {
    np.dtype("float32"): "torch.float32",
    np.dtype("float64"): "torch.float64",
    np.dtype("int64"): "torch.int64",
    np.dtype("bool"): "torch.bool",
    np.dtype("uint8"): "torch.uint8",
}


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def save_memmap(path, tree, batch):
    """tensordict's TensorDict.memmap(path): nested dicts of numpy arrays."""
    os.makedirs(path, exist_ok=True)
    meta = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            save_memmap(os.path.join(path, key), value, batch)
            meta[key] = {"type": "TensorDict"}
        else:
            value.tofile(os.path.join(path, key + ".memmap"))
            meta[key] = {"device": "cpu", "shape": list(value.shape),
                         "dtype": TORCH_DTYPE[value.dtype], "is_nested": False}
    meta.update({"shape": list(batch), "device": "cpu", "_type": TD_TYPE})
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump(meta, f)


def flat(tree, prefix=()):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from flat(value, prefix + (key,))
        else:
            yield prefix + (key,), value


class Buffer:
    """A LazyMemmapStorage + RoundRobinWriter (+ PrioritizedSampler) in numpy."""

    def __init__(self, capacity, alpha=None, eps=1e-8, beta=0.4, tail=()):
        self.capacity = capacity
        self.tail = tuple(tail)    # batch dimensions past the first (a [N, T] storage)
        self.storage = None        # allocated at the first write, at capacity
        self.cursor = 0
        self.write_count = 0
        self.len = 0
        self.written = []          # every row's values, in the order written
        self.slot_of_write = []    # the storage row each write went to
        self.alpha, self.eps, self.beta = alpha, eps, beta
        if alpha is not None:
            f32max = float(np.finfo(np.float32).max)
            self.sum_tree = np.zeros(capacity, np.float32)   # SumSegmentTreeFp32
            self.min_tree = np.full(capacity, f32max, np.float32)
            self.max_priority = (1.0, 0)  # (value, index): mark_update's first row
            self.priority_of_write = []                       # tree value per row written

    def extend(self, rows, with_index=False):
        b = len(next(iter(flat(rows)))[1])
        if with_index:  # TensorDictRoundRobinWriter writes each row's storage index
            rows = dict(rows, index=(np.arange(self.cursor, self.cursor + b) %
                                     self.capacity).astype(np.int64))
        if self.storage is None:
            self.storage = {}
            for path, value in flat(rows):
                node = self.storage
                for k in path[:-1]:
                    node = node.setdefault(k, {})
                node[path[-1]] = np.zeros((self.capacity,) + value.shape[1:], value.dtype)
        index = np.arange(self.cursor, self.cursor + b) % self.capacity
        for path, value in flat(rows):
            node = self.storage
            for k in path[:-1]:
                node = node[k]
            node[path[-1]][index] = value
        for i in range(b):
            self.written.append({path: value[i] for path, value in flat(rows)})
            self.slot_of_write.append(int(index[i]))
        self.cursor = (self.cursor + b) % self.capacity
        self.write_count += b
        self.len = min(self.len + b, self.capacity)
        if self.alpha is not None:
            # mark_update: the default priority (max_priority), transformed once.
            v = np.float32((self.max_priority[0] + self.eps) ** self.alpha)
            for i in index:
                self.sum_tree[i] = v
                self.min_tree[i] = v
            self.priority_of_write.extend([v] * b)
        return index

    def update_priority(self, index, priority):
        for i, p in zip(index, priority):
            v = np.float32((p + self.eps) ** self.alpha)
            self.sum_tree[i] = v
            self.min_tree[i] = v
            # The write that now owns storage row i: the last one to it.
            owner = max(w for w, slot in enumerate(self.slot_of_write) if slot == i)
            self.priority_of_write[owner] = v
            if p > self.max_priority[0]:
                self.max_priority = (float(p), int(i))

    def order(self):
        """The storage row of each valid row, oldest first: where the last
        `len` writes went."""
        return self.slot_of_write[len(self.written) - self.len:]

    def valid_rows(self):
        """The valid rows oldest first: the last `len` rows written."""
        rows = self.written[len(self.written) - self.len:]
        out = {}
        for path in rows[0] if rows else []:
            out["/".join(path)] = np.stack([r[path] for r in rows])
        return out

    def dump(self, path, newer, batch_size=None, transform=False, storage_metadata=True):
        os.makedirs(path)
        save_memmap(os.path.join(path, "storage"), self.storage, [self.capacity, *self.tail])
        if storage_metadata:
            with open(os.path.join(path, "storage", "storage_metadata.json"), "w") as f:
                json.dump({"metadata": {}, "is_pytree": False, "len": self.len}, f)
        os.makedirs(os.path.join(path, "writer"))
        with open(os.path.join(path, "writer", "metadata.json"), "w") as f:
            meta = {"cursor": self.cursor}
            if newer:
                meta["write_count"] = self.write_count
            json.dump(meta, f)
        if self.alpha is not None:
            sampler = os.path.join(path, "sampler")
            os.makedirs(sampler)
            # torch.as_tensor([python floats]) is float32, copied into float64.
            self.sum_tree.astype(np.float64).tofile(os.path.join(sampler, "sumtree.memmap"))
            self.min_tree.astype(np.float64).tofile(os.path.join(sampler, "mintree.memmap"))
            meta = {"_alpha": float(self.alpha), "_beta": float(self.beta),
                    "_eps": float(self.eps),
                    "_max_priority": [float(self.max_priority[0]),
                                      float(self.max_priority[1])],
                    "_max_capacity": float(self.capacity)}
            if newer:
                meta["_schema_version"] = 1
            with open(os.path.join(sampler, "sampler_metadata.json"), "w") as f:
                json.dump(meta, f)
        if transform:
            torch.save({"loc": torch.zeros(3), "scale": torch.ones(3)},
                       os.path.join(path, "transform.t"))
        meta = {"batch_size": batch_size}
        if newer:
            meta["consume_after_n_samples"] = None
        with open(os.path.join(path, "buffer_metadata.json"), "w") as f:
            json.dump(meta, f)
        if newer:
            with open(os.path.join(path, "prefetch.pkl"), "wb") as f:
                pickle.dump({"version": 1, "capacity": 0, "queue": ()}, f)
        # The pickled parts, as a reader lists them.
        return (["transform.t"] if transform else []) + (["prefetch.pkl"] if newer else [])


def rows(rng, start, b, traj=None, reward=None, tail=()):
    tail = tuple(tail)
    out = {
        "obs": rng.standard_normal((b, *tail, 3)).astype(np.float32),
        "action": (np.arange(start, start + b * int(np.prod(tail, dtype=int))) * 7 % 5)
        .reshape((b, *tail)).astype(np.int64),
        "next": {
            "reward": rng.standard_normal((b, *tail, 1)).astype(np.float32),
            "done": (rng.random((b, *tail, 1)) < 0.2),
        },
    }
    if traj is not None:
        out["next"]["observation"] = rng.standard_normal((b, 3)).astype(np.float32)
        out["observation"] = out.pop("obs")
        out["collector"] = {"traj_ids": np.asarray(traj, np.int64)}
        out["next"]["terminated"] = out["next"]["done"].copy()
        out["next"]["truncated"] = np.zeros((b, 1), bool)
    return out


def describe(buf, pickled, sampler, writer, layout, extra=None):
    valid = buf.valid_rows()
    fact = {
        "capacity": buf.capacity, "valid": buf.len, "cursor": buf.cursor,
        "write_count": buf.write_count if layout == NEWER else None,
        "sampler": sampler, "writer": writer, "layout": layout,
        # the storage row of each valid row, oldest first
        "order": buf.order(),
        "leaves": {k: {"shape": list(v.shape), "sha256": sha(v)} for k, v in valid.items()},
        # storage order, every row
        "storage": {"/".join(p): sha(v) for p, v in flat(buf.storage)},
        "pickled": pickled,
    }
    if buf.alpha is not None:
        pri = np.asarray(buf.priority_of_write[len(buf.written) - buf.len:], np.float32)
        fact["priority"] = [float(v) for v in pri.astype(np.float64)]
    fact.update(extra or {})
    return fact


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1234)
    facts = {}

    # A partly filled buffer, torchrl 0.13: the writer keeps only its cursor.
    buf = Buffer(16)
    start = 0
    for b in (4, 4, 2):
        buf.extend(rows(rng, start, b))
        start += b
    pickled = buf.dump(os.path.join(out, "partial"), newer=False, batch_size=4, transform=True)
    facts["partial"] = describe(buf, pickled, "RandomSampler", "RoundRobinWriter", OLDER)

    # A full buffer that wrapped: the oldest row is at the cursor (main's layout).
    buf = Buffer(12)
    start = 0
    for b in (5, 5, 5, 5, 5, 5):
        buf.extend(rows(rng, start, b))
        start += b
    pickled = buf.dump(os.path.join(out, "wrapped"), newer=True, batch_size=None)
    facts["wrapped"] = describe(buf, pickled, "RandomSampler", "RoundRobinWriter", NEWER)

    # A prioritized buffer, partly filled, whose priorities were updated.
    buf = Buffer(20, alpha=0.7, eps=1e-6, beta=0.5)
    start = 0
    for b in (6, 7):
        index = buf.extend(rows(rng, start, b))
        start += b
        buf.update_priority(index, rng.random(b) * 3)
    pickled = buf.dump(os.path.join(out, "prioritized"), newer=True, batch_size=8)
    facts["prioritized"] = describe(buf, pickled, "PrioritizedSampler",
                                    "RoundRobinWriter", NEWER,
                                    {"alpha": 0.7, "eps": 1e-6, "beta": 0.5})

    # A prioritized buffer that wrapped, torchrl 0.13 (no write_count).
    buf = Buffer(10, alpha=0.6, eps=1e-8)
    start = 0
    for b in (4, 4, 4, 3):
        index = buf.extend(rows(rng, start, b))
        start += b
        buf.update_priority(index, rng.random(b) * 2 + 0.1)
    pickled = buf.dump(os.path.join(out, "prioritized_wrapped"), newer=False, batch_size=4)
    facts["prioritized_wrapped"] = describe(buf, pickled, "PrioritizedSampler",
                                            "RoundRobinWriter", OLDER,
                                            {"alpha": 0.6, "eps": 1e-8, "beta": 0.4})

    # A TED buffer (collector/traj_ids, next/...) that wrapped mid-episode.
    buf = Buffer(24)
    traj, step, start = 0, 0, 0
    lengths = [5, 9, 3, 7, 6, 4, 8]
    ids = []
    for n in lengths:
        ids += [traj] * n
        traj += 1
    for b in (10, 10, 10, 12):
        chunk = ids[start:start + b]
        buf.extend(rows(rng, start, len(chunk), traj=chunk), with_index=True)
        start += len(chunk)
    pickled = buf.dump(os.path.join(out, "ted"), newer=True, batch_size=None)
    valid = buf.valid_rows()
    episodes = []
    t = valid["collector/traj_ids"]
    r = valid["next/reward"][:, 0].astype(np.float64)
    first = 0
    for i in range(1, len(t) + 1):
        if i == len(t) or t[i] != t[first]:
            episodes.append({"traj_id": int(t[first]), "first_row": first, "length": i - first,
                             "return": float(r[first:i].sum())})
            first = i
    facts["ted"] = describe(buf, pickled, "RandomSampler", "TensorDictRoundRobinWriter", NEWER,
                            {"episodes": episodes})

    # A storage of one batch dimension holding [B, T] trajectories (ndim=1):
    # len counts rows, whatever T.
    buf = Buffer(6, tail=(4,))
    for start in (0, 4):
        buf.extend(rows(rng, start, 4, tail=(4,)))
    pickled = buf.dump(os.path.join(out, "trajectories"), newer=True, batch_size=2)
    facts["trajectories"] = describe(buf, pickled, "RandomSampler", "RoundRobinWriter", NEWER)

    # An ndim=2 storage, prioritized: len counts the elements of [rows, T],
    # the sum tree has a leaf an element (raveled), the cursor counts rows.
    cap, t = 5, 3
    buf = Buffer(cap, tail=(t,))
    for start in (0, 2):
        buf.extend(rows(rng, start, 2, tail=(t,)))
    path = os.path.join(out, "ndim2")
    pickled = buf.dump(path, newer=True, batch_size=None)
    with open(os.path.join(path, "storage", "storage_metadata.json"), "w") as f:
        json.dump({"metadata": {}, "is_pytree": False, "len": buf.len * t}, f)
    alpha, eps = 0.5, 1e-6
    tree = np.zeros(cap * t, np.float32)
    for slot in buf.slot_of_write:
        for k in range(t):
            tree[slot * t + k] = np.float32((rng.random() * 2 + eps) ** alpha)
    os.makedirs(os.path.join(path, "sampler"))
    tree.astype(np.float64).tofile(os.path.join(path, "sampler", "sumtree.memmap"))
    np.where(tree == 0, np.finfo(np.float32).max, tree).astype(np.float64).tofile(
        os.path.join(path, "sampler", "mintree.memmap"))
    with open(os.path.join(path, "sampler", "sampler_metadata.json"), "w") as f:
        json.dump({"_alpha": alpha, "_beta": 0.4, "_eps": eps, "_max_priority": [1.0, 0.0],
                   "_max_capacity": float(cap * t), "_schema_version": 1}, f)
    facts["ndim2"] = describe(buf, pickled, "PrioritizedSampler", "RoundRobinWriter", NEWER,
                              {"alpha": alpha, "eps": eps, "beta": 0.4})
    facts["ndim2"]["priority"] = [[float(v) for v in tree.reshape(cap, t)[slot].astype(np.float64)]
                                  for slot in buf.order()]

    # write_at() (newer writers): a row past the cursor, which stays; len
    # runs ahead of it and write_count counts it (round_robin.py write_at).
    buf = Buffer(10)
    buf.extend(rows(rng, 0, 3))
    path = os.path.join(out, "write_at")
    buf.dump(path, newer=True)
    with open(os.path.join(path, "storage", "storage_metadata.json"), "w") as f:
        json.dump({"metadata": {}, "is_pytree": False, "len": 8}, f)
    with open(os.path.join(path, "writer", "metadata.json"), "w") as f:
        json.dump({"cursor": 3, "write_count": 4}, f)
    facts["write_at"] = {"capacity": 10, "valid": 8, "cursor": 3, "write_count": 4}

    # TensorDictMaxValueWriter: rows kept by rank, full, its cursor at 0 and
    # write_count counting every replacement (writers/max_value.py).
    buf = Buffer(6)
    buf.extend(rows(rng, 0, 6))
    path = os.path.join(out, "max_value")
    buf.dump(path, newer=True)
    top = np.stack([rng.standard_normal(6), np.arange(6)], 1).astype(np.float32)
    top.tofile(os.path.join(path, "writer", "current_top_values.memmap"))
    with open(os.path.join(path, "writer", "metadata.json"), "w") as f:
        json.dump({"cursor": 0, "write_count": 17, "rank_key": ["next", "reward"],
                   "dtype": "torch.float32", "shape": [6, 2]}, f)
    facts["max_value"] = {"capacity": 6, "valid": 6, "cursor": 0, "write_count": 17,
                          "writer": "TensorDictMaxValueWriter",
                          "storage": {"/".join(p): sha(v) for p, v in flat(buf.storage)}}

    # A dump whose writer cursor and storage len disagree (a stale writer/).
    buf = Buffer(16)
    buf.extend(rows(rng, 0, 9))
    buf.dump(os.path.join(out, "disagree"), newer=False, batch_size=None)
    with open(os.path.join(out, "disagree", "writer", "metadata.json"), "w") as f:
        json.dump({"cursor": 5}, f)
    facts["disagree"] = {"capacity": 16, "valid": 9, "cursor": 5}

    # A dump with no storage_metadata.json: its fill level is unknown.
    buf = Buffer(8)
    buf.extend(rows(rng, 0, 3))
    buf.dump(os.path.join(out, "unknown_len"), newer=False, storage_metadata=False)
    facts["unknown_len"] = {"capacity": 8, "valid": None, "cursor": 3,
                            "storage": {"/".join(p): sha(v) for p, v in flat(buf.storage)}}

    # A stack of chunks, named to need natural order (part-2 before part-10).
    stack = os.path.join(out, "stack")
    chunks = [("part-1", 5), ("part-2", 3), ("part-10", 4)]
    parts = []
    for name, n in chunks:
        tree = {"obs": rng.standard_normal((n, 2, 2)).astype(np.float32),
                "label": rng.integers(0, 10, n).astype(np.int64),
                "nested": {"x": rng.standard_normal(n)}}
        save_memmap(os.path.join(stack, name), tree, [n])
        parts.append(tree)
    whole = {"/".join(p): np.concatenate([dict(flat(t))[p] for t in parts])
             for p, _ in flat(parts[0])}
    facts["stack"] = {"chunks": [[n, r] for n, r in chunks], "rows": sum(r for _, r in chunks),
                      "leaves": {k: {"shape": list(v.shape), "sha256": sha(v)}
                                 for k, v in whole.items()}}
    json.dump(facts, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
