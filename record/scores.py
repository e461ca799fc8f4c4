"""What one attention layer computed its weights from, kept instead of the weights themselves.

A layer's weights are softmax(scores) row by row, so each row is fixed by the queries and keys as
the kernel used them, the scale, the rule that masks some keys, and the row's log-sum-exp:

    score(i, j) = scale · qᵢ·kⱼ  (then softcap · tanh(score / softcap) where the model caps,
                                  and + bias[j − i] where it adds a relative-position bias)
    pᵢⱼ = exp(score(i, j) − lseᵢ)  where the mask allows (i, j), else exactly 0

Q and K grow with T, not T²: any head, or any tile of it, is recomputed exactly on demand. Keys
are kept at the width the kernel read them: under grouped-query attention query head h reads
key head h // (H / H_kv). A bias that depends on the distance j − i alone (T5's bucketed
relative positions) is kept as one number per head and distance, O(T). What a model applies
beyond this (ALiBi inside a model's own attention code, learned sink logits) is not expressible
here: such a model is recorded with its eager weights instead, and its record says so
(docs/python.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

Index = slice | np.ndarray  # a range of positions, or an array of them
CELLS_PER_BLOCK = 1 << 22  # scores a block of rows holds when a whole head is rebuilt: 16 MB


@dataclass(frozen=True)
class MaskRule:
    """Which keys a query may attend to, as a rule rather than a T × T table: every key, or
    (causal) keys at or before the query's position, and (window) only the last `window` of
    them. A query at row i sits at key position i + offset (decoder rows after a prefix)."""

    causal: bool = False
    window: int | None = None  # keys j with position − j < window; None: no window
    offset: int = 0

    def allowed(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """(len(rows), len(cols)) bool, or None where every pair is allowed."""
        if not self.causal and self.window is None:
            return None
        pos = rows[:, None] + self.offset  # (r, 1)
        ok = np.ones((len(rows), len(cols)), dtype=bool)
        if self.causal:
            ok &= cols[None, :] <= pos
        if self.window is not None:
            ok &= pos - cols[None, :] < self.window
        return ok

    def allows(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """(n,) bool: whether query rows[m] may attend to key cols[m]; None: all may."""
        if not self.causal and self.window is None:
            return None
        pos = rows + self.offset
        ok = cols <= pos if self.causal else np.ones(len(rows), dtype=bool)
        return ok & (pos - cols < self.window) if self.window is not None else ok

    def to_dict(self) -> dict[str, Any]:
        return {"causal": self.causal, "window": self.window, "offset": self.offset}

    @classmethod
    def of(cls, allowed: np.ndarray, window: int | None = None) -> MaskRule:
        """The rule a (Q, K) boolean mask follows: none, causal, or causal within a window;
        a ValueError for any other mask."""
        Q, K = allowed.shape
        offset = K - Q
        rows, cols = np.arange(Q), np.arange(K)
        candidates = [cls(False, None, offset), cls(True, None, offset)]
        candidates += [cls(True, window, offset)] if window else []
        for rule in candidates:
            ok = rule.allowed(rows, cols)
            if allowed.all() if ok is None else np.array_equal(allowed, ok):
                return rule
        raise ValueError("the mask is neither full, causal nor a sliding window")


@dataclass(frozen=True, eq=False)
class LayerScores:
    """One layer of one kind of attention, as its kernel computed it (see the module doc)."""

    q: np.ndarray  # (H, Q, d) float32: queries after any rotation, as the kernel read them
    k: np.ndarray  # (H_kv, K, d) float32: keys at the kernel's width
    lse: np.ndarray  # (H, Q) float32: log Σⱼ exp(score(i, j)) over the allowed keys
    scale: float
    mask: MaskRule = field(default_factory=MaskRule)
    softcap: float | None = None
    # (H, Q + K − 1) float32: added to score(i, j) at [h, j − i + Q − 1]; None: no bias
    bias: np.ndarray | None = None

    @property
    def n_heads(self) -> int:
        return int(self.q.shape[0])

    @property
    def shape(self) -> tuple[int, int, int]:
        """(H, Q, K): the weights this layer stands for."""
        return self.n_heads, int(self.q.shape[1]), int(self.k.shape[1])

    def key_head(self, head: int) -> int:
        """The key head a query head reads (grouped-query attention shares one among several)."""
        return head // (self.n_heads // int(self.k.shape[0]))

    def weights(
        self, head: int, rows: Index = slice(None), cols: Index = slice(None)
    ) -> np.ndarray:
        """(r, c) float32: the exact weights of one head's tile, exactly 0 where masked; rows
        or cols (not both) may be an array of positions."""
        _, Q, K = self.shape
        r, c = np.arange(Q)[rows], np.arange(K)[cols]
        if _span(rows, Q) and _span(cols, K) and len(r) * len(c) > CELLS_PER_BLOCK:
            return self._by_blocks(head, r, c)  # a large tile: never its whole T² at once
        s = (self.q[head, rows] @ self.k[self.key_head(head), cols].T) * np.float32(self.scale)
        if self.softcap is not None:
            s = np.float32(self.softcap) * np.tanh(s / np.float32(self.softcap))
        if self.bias is not None:
            s += self.bias[head][c[None, :] - r[:, None] + (Q - 1)]
        s -= self.lse[head, rows][:, None]
        np.minimum(s, np.float32(1e-3), out=s)  # a masked key's score may be any size: no inf
        out: np.ndarray = np.exp(s, out=s)  # (r, c)
        ok = self.mask.allowed(r, c)
        if ok is not None:
            np.multiply(out, ok, out=out)  # masked: exactly 0
        return out

    def head(self, head: int) -> np.ndarray:
        """(Q, K) float32: one head's whole map, built a block of rows at a time, each over
        the keys its rows can reach (a causal or windowed mask leaves the rest 0)."""
        return self.weights(head)

    def _by_blocks(self, head: int, r: np.ndarray, c: np.ndarray) -> np.ndarray:
        """weights() of the tile rows r × keys c (each a run of positions), a block of rows
        at a time over the keys those rows can reach: the rest of the tile stays 0, and no
        step holds more than CELLS_PER_BLOCK scores (the whole 8,192² map at once took 1.4 s,
        in passes and temporaries of 256 MB each)."""
        out = np.zeros((len(r), len(c)), dtype=np.float32)
        r0, r1, c0, c1 = int(r[0]), int(r[-1]) + 1, int(c[0]), int(c[-1]) + 1
        step = max(1, CELLS_PER_BLOCK // len(c))
        for start in range(r0, r1, step):
            stop = min(r1, start + step)
            lo, hi = self.reach(start, stop)
            lo, hi = max(lo, c0), min(hi, c1)
            if hi > lo:
                block = self.weights(head, slice(start, stop), slice(lo, hi))
                out[start - r0 : stop - r0, lo - c0 : hi - c0] = block
        return out

    def reach(self, start: int, stop: int) -> tuple[int, int]:
        """The keys rows start..stop-1 may attend to, as one range."""
        K, rule = int(self.k.shape[1]), self.mask
        hi = min(K, stop + rule.offset) if rule.causal else K
        lo = max(0, start + rule.offset - rule.window + 1) if rule.window else 0
        return lo, max(lo, hi)

    def nbytes(self) -> int:
        extra = 0 if self.bias is None else self.bias.nbytes
        return int(self.q.nbytes + self.k.nbytes + self.lse.nbytes + extra)


def _span(index: Index, n: int) -> bool:
    """Whether index picks a run of consecutive positions out of n (a slice of step 1)."""
    return isinstance(index, slice) and index.indices(n)[2] == 1 and len(range(n)[index]) > 0


def stack_nbytes(layers: tuple[LayerScores, ...]) -> int:
    """What a stack of recorded layers holds, in bytes."""
    return sum(layer.nbytes() for layer in layers)


def dense(layers: tuple[LayerScores, ...]) -> np.ndarray:
    """(L, H, Q, K) float32: every head of every layer (T² each: only for what fits memory)."""
    return np.stack([np.stack([lay.head(h) for h in range(lay.n_heads)]) for lay in layers])


Stacks = dict[str, tuple[LayerScores, ...]]  # kind → its layers


def npz_arrays(stacks: Stacks) -> dict[str, np.ndarray]:
    """Each layer's q, k and lse as NPZ entries `scores.KIND.LAYER.q` (and .k, .lse; .bias
    for a layer with a relative-position bias)."""
    return {
        f"scores.{kind}.{i}.{part}": getattr(layer, part)
        for kind, layers in stacks.items()
        for i, layer in enumerate(layers)
        for part in ("q", "k", "lse", "bias")
        if getattr(layer, part) is not None
    }


def tree(stacks: Stacks, with_arrays: bool = True) -> dict[str, list[dict[str, Any]]]:
    """The record's "scores" object: per kind, each layer's scale, mask rule, soft cap and
    (with_arrays; an NPZ keeps them as entries of their own) its q, k and lse."""
    return {
        kind: [
            {"scale": lay.scale, "mask": lay.mask.to_dict(), "softcap": lay.softcap}
            | {"has_bias": lay.bias is not None}
            | ({"q": lay.q, "k": lay.k, "lse": lay.lse} if with_arrays else {})
            | ({"bias": lay.bias} if with_arrays and lay.bias is not None else {})
            for lay in layers
        ]
        for kind, layers in stacks.items()
    }


def from_parts(described: dict[str, list[dict[str, Any]]], arrays: Any = None) -> Stacks:
    """Stacks back from tree(...): its arrays inline (JSON), or in `arrays`, a mapping of
    npz_arrays(...)'s entries (NPZ)."""

    def part(kind: str, i: int, d: dict[str, Any], name: str) -> np.ndarray:
        value = d[name] if name in d else arrays[f"scores.{kind}.{i}.{name}"]
        return np.asarray(value, dtype=np.float32)

    return {
        kind: tuple(
            LayerScores(
                q=part(kind, i, d, "q"),
                k=part(kind, i, d, "k"),
                lse=part(kind, i, d, "lse"),
                scale=float(d["scale"]),
                mask=MaskRule(**d["mask"]),
                softcap=d.get("softcap"),
                bias=part(kind, i, d, "bias") if d.get("has_bias") else None,
            )
            for i, d in enumerate(layers)
        )
        for kind, layers in described.items()
    }


def union_mask(layers: tuple[LayerScores, ...]) -> np.ndarray:
    """(Q, K) bool: where any layer lets a query attend (T²: for what fits memory)."""
    _, Q, K = layers[0].shape
    rows, cols = np.arange(Q), np.arange(K)
    out = np.zeros((Q, K), dtype=bool)
    for layer in layers:
        ok = layer.mask.allowed(rows, cols)
        out |= True if ok is None else ok
    return out


@dataclass(frozen=True, eq=False)
class Summary:
    """One kind's heads at a glance, computed at trace time from the exact weights a block of
    rows at a time (no step holds more than one block of rows of every head of one layer):
    a pooled overview of each head and the statistics the pages and experiments read first.
    Row i of the overview covers queries row_edges[i] to row_edges[i + 1] − 1 (likewise keys)."""

    overview_max: np.ndarray  # (L, H, B_q, B_k) float16: each block's largest weight
    overview_mean: np.ndarray  # (L, H, B_q, B_k) float16: each block's mean weight
    row_edges: np.ndarray  # (B_q + 1,) int64
    col_edges: np.ndarray  # (B_k + 1,) int64
    entropy: np.ndarray  # (L, H) float32: mean over queries of −Σ p log p, in nats
    previous: np.ndarray  # (L, H) float32: mean weight on the key just before the query's own
    first: np.ndarray  # (L, H) float32: mean weight on key 0 (a first-token sink)
    induction: np.ndarray  # (L, H) float32: mean weight on the key after the latest earlier
    # occurrence of the query's own token, over the queries that have one; NaN without any
    # the rest of the Heads page's statistics (None in records written before they were kept)
    own: np.ndarray | None = None  # (L, H) float32: mean weight on the query's own position
    distance: np.ndarray | None = None  # (L, H) float32: mean over queries of Σⱼ pᵢⱼ |i − j|
    end: np.ndarray | None = None  # (L, H) float32: mean weight on end tokens; NaN without any

    def arrays(self) -> dict[str, np.ndarray]:
        fields = {name: getattr(self, name) for name in SUMMARY_FIELDS}
        return {name: value for name, value in fields.items() if value is not None}


SUMMARY_FIELDS = ("overview_max", "overview_mean", "row_edges", "col_edges", "entropy",
                  "previous", "first", "induction", "own", "distance", "end")  # fmt: skip
LATER_FIELDS = frozenset({"own", "distance", "end"})  # absent from older records


def edges(n: int, blocks: int) -> np.ndarray:
    """Boundaries of at most `blocks` blocks of one width covering 0..n (the last may be
    shorter): every block the same size, so pooling is a reshape."""
    width = max(1, -(-n // blocks))
    return np.append(np.arange(0, n, width), n).astype(np.int64)


def summary_tree(summaries: dict[str, Summary]) -> dict[str, dict[str, np.ndarray]]:
    """The record's "summaries" object: per kind, each field's array."""
    return {kind: s.arrays() for kind, s in summaries.items()}


def summaries_from(tree: dict[str, Any]) -> dict[str, Summary]:
    """Summaries back from summary_tree(...) (JSON lists or arrays alike)."""
    types = {"overview_max": np.float16, "overview_mean": np.float16, "row_edges": np.int64,
             "col_edges": np.int64}  # fmt: skip
    return {
        kind: Summary(
            **{
                f: np.asarray(fields[f], dtype=types.get(f, np.float32))
                for f in SUMMARY_FIELDS
                if f in fields or f not in LATER_FIELDS
            }
        )
        for kind, fields in tree.items()
    }
