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

Queries and keys are kept at the dtype the kernel read them (a bfloat16 model's in bfloat16:
exact, and half the size), bfloat16 as its raw 16-bit words, since numpy has no such type.
Weights are rebuilt in float64 from them and from each row's log-sum-exp, which the trace
keeps exact to float64: a head equals a float64 softmax of the record's own q · k.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

Index = slice | np.ndarray  # a range of positions, or an array of them
CELLS_PER_BLOCK = 1 << 21  # scores a block of rows holds when a whole head is rebuilt: 16 MB
# the dtypes queries and keys are kept at, and the numpy type that holds each
KEPT_DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
               "bfloat16": np.dtype(np.uint16), "float64": np.dtype(np.float64)}  # fmt: skip


def widened(a: np.ndarray, dtype: str) -> np.ndarray:
    """A kept array of queries or keys as float64, exactly (bfloat16 words: the high half of a
    float32)."""
    if dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


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

    q: np.ndarray  # (H, Q, d) at `dtype`: queries after any rotation, as the kernel read them
    k: np.ndarray  # (H_kv, K, d) at `dtype`: keys at the kernel's width
    # (H, Q) float64 (float32 in records written before it was exact): log Σⱼ exp(score(i, j))
    # over the allowed keys, the scores summed in float64
    lse: np.ndarray
    scale: float
    mask: MaskRule = field(default_factory=MaskRule)
    softcap: float | None = None
    # (H, Q + K − 1) float32: added to score(i, j) at [h, j − i + Q − 1]; None: no bias
    bias: np.ndarray | None = None
    dtype: str = "float32"  # q and k's: float32, float16, float64, or bfloat16 (uint16 words)

    def __post_init__(self) -> None:
        held = KEPT_DTYPES.get(self.dtype)
        if held is None:
            raise ValueError(f"dtype must be one of {', '.join(KEPT_DTYPES)}, got {self.dtype!r}")
        for name in ("q", "k"):
            if getattr(self, name).dtype != held:
                raise ValueError(
                    f"{name} is {getattr(self, name).dtype}, but a layer kept as {self.dtype} "
                    f"holds {held} (bfloat16 as its raw 16-bit words)"
                )

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
        """(r, c) float32: the exact weights of one head's tile, exactly 0 where masked, each
        computed in float64 (then rounded once); rows or cols (not both) may be an array of
        positions."""
        _, Q, K = self.shape
        r, c = np.arange(Q)[rows], np.arange(K)[cols]
        if _span(rows, Q) and _span(cols, K) and len(r) * len(c) > CELLS_PER_BLOCK:
            return self._by_blocks(head, r, c)  # a large tile: never its whole T² at once
        q = widened(self.q[head, rows], self.dtype)  # (r, d) float64
        k = widened(self.k[self.key_head(head), cols], self.dtype)  # (c, d)
        s = q @ k.T
        s *= self.scale
        if self.softcap is not None:
            s = self.softcap * np.tanh(s / self.softcap)
        if self.bias is not None:
            s += self.bias[head][c[None, :] - r[:, None] + (Q - 1)]
        s -= self.lse[head, rows][:, None]
        np.minimum(s, 1e-3, out=s)  # a masked key's score may be any size: no inf
        np.exp(s, out=s)  # (r, c)
        ok = self.mask.allowed(r, c)
        if ok is not None:
            np.multiply(s, ok, out=s)  # masked: exactly 0
        return np.asarray(s, dtype=np.float32)

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

    def same(self, other: LayerScores) -> bool:
        """Exact equality of every field, the arrays' numbers included."""
        arrays = ("q", "k", "lse", "bias")
        return all(_same_array(getattr(self, a), getattr(other, a)) for a in arrays) and (
            (self.scale, self.mask, self.softcap, self.dtype)
            == (other.scale, other.mask, other.softcap, other.dtype)
        )


def _same_array(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(a, b)


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
    """The record's "scores" object: per kind, each layer's scale, mask rule, soft cap, the
    dtype of its q and k where not float32, and (with_arrays; an NPZ keeps them as entries of
    their own) its q, k and lse."""
    return {
        kind: [_described(lay, with_arrays) for lay in layers] for kind, layers in stacks.items()
    }


def _described(lay: LayerScores, with_arrays: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"scale": lay.scale, "mask": lay.mask.to_dict(), "softcap": lay.softcap}
    out["has_bias"] = lay.bias is not None
    if lay.dtype != "float32":  # absent: float32, as every record before dtypes were kept
        out["dtype"] = lay.dtype
    if with_arrays:
        out |= {"q": lay.q, "k": lay.k, "lse": lay.lse}
        out |= {"bias": lay.bias} if lay.bias is not None else {}
    return out


def from_parts(described: dict[str, list[dict[str, Any]]], arrays: Any = None) -> Stacks:
    """Stacks back from tree(...): its arrays inline (JSON), or in `arrays`, a mapping of
    npz_arrays(...)'s entries (NPZ). Records written before lse was exact keep it in float32:
    it reads back as the same numbers in float64."""

    def part(kind: str, i: int, d: dict[str, Any], name: str, dtype: Any) -> np.ndarray:
        value = d[name] if name in d else arrays[f"scores.{kind}.{i}.{name}"]
        return np.asarray(value, dtype=dtype)

    def layer(kind: str, i: int, d: dict[str, Any]) -> LayerScores:
        dtype = d.get("dtype", "float32")
        held = KEPT_DTYPES.get(dtype)
        if held is None:
            raise ValueError(
                f"scores.{kind}[{i}]: dtype {dtype!r} is none of {', '.join(KEPT_DTYPES)}"
            )
        return LayerScores(
            q=part(kind, i, d, "q", held),
            k=part(kind, i, d, "k", held),
            lse=part(kind, i, d, "lse", np.float64),
            scale=float(d["scale"]),
            mask=MaskRule(**d["mask"]),
            softcap=d.get("softcap"),
            bias=part(kind, i, d, "bias", np.float32) if d.get("has_bias") else None,
            dtype=dtype,
        )

    return {
        kind: tuple(layer(kind, i, d) for i, d in enumerate(layers))
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
