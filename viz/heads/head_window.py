"""One head at any length: a window of its weights, pooled into blocks while the window is large
and exact, cell by cell, once it is at most EXACT_SIDE positions a side.

The whole head of a long input is its pooled overview: the record's own (record/scores.py's
Summary, computed at trace time from the exact weights) where it has one, else pooled here a
block of rows at a time from `Trace.head` (never more than one block of rows of T² at once).
A zoomed window is pooled the same way over its own positions, and recomputed exactly from
the record when it is small enough to show every cell (docs/app.md, Explore).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from attnlens.record.norms import Measure, check_measure
from attnlens.record.picking import KIND_TITLES
from attnlens.record.scores import LayerScores, MaskRule
from attnlens.record.summary import edges
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.colour_scale import Scale, legend, measure_legend
from attnlens.viz.heads.head_grid import grid_labels

EXACT_SIDE = 256  # a window at most this many positions a side shows every cell exactly
BLOCKS = 128  # a pooled window's blocks a side: the record's overview (summaries.OVERVIEW)
Pooling = Literal["max", "mean"]
POOLINGS: tuple[Pooling, ...] = ("max", "mean")
Span = tuple[int, int]  # positions start..stop-1
# how a window of one head becomes blocks: (trace, kind, layer, head, row edges, column edges,
# pooling, measure) → (B_q, B_k) float32; `pooled` below, or one a caller brings (the app
# pools the norm measure of a long record with the trace-time code, model/lenses/head_pooling)
Pooler = Callable[[Trace, Kind, int, int, np.ndarray, np.ndarray, Pooling, Measure], np.ndarray]


@dataclass(frozen=True, eq=False)
class HeadWindow:
    """Queries rows[0]..rows[1]-1 × keys cols[0]..cols[1]-1 of one head of a (Q, K) map: one
    value per block of row_edges × col_edges (absolute positions), NaN where the mask allows
    no pair of the block. pooling None: every block is one cell, its exact weight."""

    title: str
    rows: Span
    cols: Span
    size: tuple[int, int]  # (Q, K): the whole head
    row_edges: np.ndarray  # (B_q + 1,) int64
    col_edges: np.ndarray  # (B_k + 1,) int64
    values: np.ndarray  # (B_q, B_k) float32
    pooling: Pooling | None
    query_labels: tuple[str, ...]  # the window's queries, 'i · token'; () while pooled
    key_labels: tuple[str, ...]
    measure: Measure = "weight"  # "norm": values are αᵢⱼ ‖f_h(xⱼ)‖ (record/norms.py)

    @property
    def exact(self) -> bool:
        return self.pooling is None

    @property
    def whole(self) -> bool:
        """Whether the window is the whole head."""
        return self.rows == (0, self.size[0]) and self.cols == (0, self.size[1])

    @property
    def quantity(self) -> str:
        """What a cell holds, in words: a weight, or what the key gave the head's output."""
        return "α‖f(x)‖" if self.measure == "norm" else "weight"

    @property
    def unit(self) -> float:
        """What the colours are relative to: 1 for weights; the window's largest αᵢⱼ ‖f(xⱼ)‖
        for the norm measure (a head's norms are not bounded by 1)."""
        if self.measure != "norm" or not np.isfinite(self.values).any():
            return 1.0
        return float(np.nanmax(self.values)) or 1.0

    def caption(self) -> str:
        """What a cell is, in words."""
        where = (
            f"queries {self.rows[0]}–{self.rows[1] - 1} × keys {self.cols[0]}–{self.cols[1] - 1}"
        )
        if self.exact:
            return f"{where}: every cell is its exact {self.quantity}"
        h = int(self.row_edges[1] - self.row_edges[0])
        w = int(self.col_edges[1] - self.col_edges[0])
        return (
            f"{where} in blocks of {h}×{w} positions: a cell is its block's {self.pooling} "
            f"{self.quantity}; drag a box to zoom (every cell exact from {EXACT_SIDE} positions "
            "a side)"
        )

    def data(self, scale: Scale) -> dict[str, Any]:
        """The payload the browser draws (app/web/static/head_zoom.js): the values as base64
        of little-endian float32 when exact, float16 when pooled (an overview of 128 × 128
        blocks is 43 KB of text), every label as plain text."""
        dtype = "<f4" if self.exact else "<f2"
        unit = self.unit
        values = np.ascontiguousarray(self.values / unit, dtype=dtype)
        return {
            "title": self.title,
            "caption": self.caption(),
            "rows": list(self.rows),
            "cols": list(self.cols),
            "size": list(self.size),
            "shape": list(self.values.shape),
            "row_edges": [int(e) for e in self.row_edges],
            "col_edges": [int(e) for e in self.col_edges],
            "values": base64.b64encode(values.tobytes()).decode("ascii"),
            "dtype": "f4" if self.exact else "f2",
            "pooling": self.pooling,
            "query_labels": list(self.query_labels),
            "key_labels": list(self.key_labels),
            "whole": self.whole,
            "measure": self.measure,
            "quantity": self.quantity,
            "unit": unit,  # a cell's value is its colour's 0..1 times this
            **(legend(scale) if self.measure == "weight" else measure_legend(scale, unit)),
        }


def head_window(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    rows: Span | None = None,
    cols: Span | None = None,
    pooling: Pooling = "max",
    exact_side: int = EXACT_SIDE,
    blocks: int = BLOCKS,
    measure: Measure = "weight",
    pooler: Pooler | None = None,
) -> HeadWindow:
    """The window rows × cols (None: all) of (kind, layer, head): exact when both sides are
    at most exact_side, else at most blocks × blocks blocks of `pooling`, the whole head
    from the record's overview where it keeps that one. measure "norm": of αᵢⱼ ‖f_h(xⱼ)‖
    (the record's norms' overviews for the whole head); anything the record does not
    keep is pooled by `pooler` (default `pooled`: from Trace.head a block of rows at a time,
    exact, its memory that of one block of rows)."""
    Q, K = check_head_of(trace, kind, layer, head)
    if check_measure(measure) == "norm":
        trace.head_norms(kind)  # a record without norms says so before any work
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
    r, c = clamp(rows, Q), clamp(cols, K)
    title = f"{KIND_TITLES[kind]} · layer {layer} · head {head}"
    title += " · norm α‖f(x)‖" if measure == "norm" else ""
    if r[1] - r[0] <= exact_side and c[1] - c[0] <= exact_side:
        return _exact(trace, kind, layer, head, r, c, title, measure)
    row_e, col_e = r[0] + edges(r[1] - r[0], blocks), c[0] + edges(c[1] - c[0], blocks)
    kept = kept_overview(trace, kind, row_e, col_e, pooling, measure)
    if kept is not None:
        values = np.asarray(kept[layer, head], dtype=np.float32)
    else:
        values = (pooler or pooled)(trace, kind, layer, head, row_e, col_e, pooling, measure)
        values = np.array(values, dtype=np.float32)
    values[~blocks_allowed(trace, kind, layer, row_e, col_e)] = np.nan
    return HeadWindow(title, r, c, (Q, K), row_e, col_e, values, pooling, (), (), measure)


def kept_overview(
    trace: Trace,
    kind: Kind,
    row_e: np.ndarray,
    col_e: np.ndarray,
    pooling: Pooling,
    measure: Measure,
) -> np.ndarray | None:
    """(L, H, B_q, B_k): the record's own overview of these blocks (the whole head's), of this
    pooling and measure, where it keeps one; None where it does not (another window, or a
    record without the norms' overviews)."""
    summary = (trace.summaries or {}).get(kind)
    if summary is None or not (
        np.array_equal(summary.row_edges, row_e) and np.array_equal(summary.col_edges, col_e)
    ):
        return None
    if measure == "norm":
        return summary.overview_norm_mean if pooling == "mean" else summary.overview_norm_max
    return summary.overview_max if pooling == "max" else summary.overview_mean


def check_head_of(trace: Trace, kind: Kind, layer: int, head: int) -> tuple[int, int]:
    """(Q, K) of one kind; a ValueError naming the value and the range for anything else."""
    if kind not in trace.kinds:
        there = ", ".join(trace.kinds) or "none"
        raise ValueError(f"{trace.model.name} records no {kind} attention; it has {there}")
    L, H = trace.model.shape(kind)
    if not 0 <= layer < L:
        raise ValueError(f"layer {layer} is outside 0..{L - 1} ({L} layers)")
    if not 0 <= head < H:
        raise ValueError(f"head {head} is outside 0..{H - 1} ({H} heads)")
    queries, keys = trace.tokens(kind)
    return len(queries), len(keys)


def clamp(span: Span | None, n: int) -> Span:
    """A span of positions within 0..n-1, at least one position long."""
    if span is None:
        return 0, n
    start = min(max(0, int(span[0])), n - 1)
    return start, min(max(start + 1, int(span[1])), n)


def _exact(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    r: Span,
    c: Span,
    title: str,
    measure: Measure = "weight",
) -> HeadWindow:
    """Every cell of the window, exact from the record; masked cells NaN."""
    rows, cols = slice(*r), slice(*c)
    values = np.array(trace.head(kind, layer, head, rows, cols, measure), dtype=np.float32)
    ok = allowed_tile(trace, kind, layer, r, c)
    if ok is not None:
        values[~ok] = np.nan
    queries, keys = grid_labels(trace, kind, rows, cols)  # the window's own only
    row_e = np.arange(r[0], r[1] + 1, dtype=np.int64)
    col_e = np.arange(c[0], c[1] + 1, dtype=np.int64)
    Q, K = map(len, trace.tokens(kind))
    return HeadWindow(title, r, c, (Q, K), row_e, col_e, values, None, queries, keys, measure)


def _rule(trace: Trace, kind: Kind, layer: int) -> MaskRule | None:
    """The layer's mask as a rule where the record keeps scores (None: it keeps weights)."""
    if trace.scores and kind in trace.scores and getattr(trace, kind) is None:
        layer_scores: LayerScores = trace.scores[kind][layer]
        return layer_scores.mask
    return None


def allowed_tile(trace: Trace, kind: Kind, layer: int, r: Span, c: Span) -> np.ndarray | None:
    """(r, c) bool: where the layer lets a query attend within the window; None: everywhere."""
    rule = _rule(trace, kind, layer)
    if rule is not None:
        return rule.allowed(np.arange(*r), np.arange(*c))
    mask = trace.mask(kind, layer)
    return None if mask is None else np.asarray(mask[slice(*r), slice(*c)], dtype=bool)


def blocks_allowed(
    trace: Trace, kind: Kind, layer: int, row_e: np.ndarray, col_e: np.ndarray
) -> np.ndarray:
    """(B_q, B_k) bool: whether the layer allows any pair of each block. From a mask rule,
    without T²: along a block the distance d = query position − key takes every whole value
    from its least to its greatest, so a block has an allowed pair where that range meets the
    rule's (causal: d ≥ 0; window: d < window)."""
    rule = _rule(trace, kind, layer)
    shape = (len(row_e) - 1, len(col_e) - 1)
    if rule is None:
        mask = trace.mask(kind, layer)
        if mask is None:
            return np.ones(shape, dtype=bool)
        tile = np.asarray(mask[row_e[0] : row_e[-1], col_e[0] : col_e[-1]], dtype=bool)
        by_rows = np.logical_or.reduceat(tile, row_e[:-1] - row_e[0], axis=0)
        return np.asarray(np.logical_or.reduceat(by_rows, col_e[:-1] - col_e[0], axis=1))
    least = row_e[:-1, None] + rule.offset - (col_e[None, 1:] - 1)  # (B_q, B_k)
    most = row_e[1:, None] - 1 + rule.offset - col_e[None, :-1]
    ok = np.ones(shape, dtype=bool)
    if rule.causal:
        ok &= most >= 0
    if rule.window is not None:
        ok &= least < rule.window
    return ok


def pooled(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    row_e: np.ndarray,
    col_e: np.ndarray,
    pooling: Pooling,
    measure: Measure = "weight",
) -> np.ndarray:
    """(B_q, B_k) float32: each block's max or mean weight (masked cells count as 0, as in the
    record's overview), one block of rows of the window at a time (measure: Trace.head's)."""
    c0, c1 = int(col_e[0]), int(col_e[-1])
    width = int(col_e[1] - col_e[0])
    n_k = len(col_e) - 1
    out = np.empty((len(row_e) - 1, n_k), dtype=np.float32)
    cells_per_col = np.diff(col_e).astype(np.float64)
    for i in range(len(row_e) - 1):
        r0, r1 = int(row_e[i]), int(row_e[i + 1])
        tile = np.asarray(trace.head(kind, layer, head, slice(r0, r1), slice(c0, c1), measure))
        padded = np.zeros((r1 - r0, n_k * width), dtype=np.float32)
        padded[:, : c1 - c0] = tile
        blocks = padded.reshape(r1 - r0, n_k, width)
        if pooling == "max":
            out[i] = blocks.max(axis=(0, 2))
        else:
            out[i] = blocks.sum(axis=(0, 2), dtype=np.float64) / ((r1 - r0) * cells_per_col)
    return out
