"""Every head of one kind as a compact payload for a grid the browser draws itself (Explore's
canvas): the model view's thumbnails without a Plotly figure.

The thumbnails are the model view's (model_view.block_share: a cell is the mean, over its block's
queries, of the share they give its block's keys; rows still sum to 1) and so is their colour
(model_view.encode: one byte a cell, 1 + round(∛share · 254), 0 where nothing could attend).
The bytes travel as base64 text: at most CELL_BUDGET cells whatever the input, each thumbnail
at most MAX_SIDE × MAX_SIDE, so minilm's 6 × 12 heads at 512 tokens are 234 KB of bytes (312 KB
of text).
Labels are plain text (the browser sets them as text, never as markup).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlens.record.norms import Measure, check_measure
from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of, check_head, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.head_marks import kv_group
from attnlens.viz.heads.model_view import (
    CELL_BUDGET,
    GAMMA,
    LEVELS,
    MAX_SIDE,
    SHARE_TICKS,
    block_edges,
    block_share,
    encode,
)
from attnlens.viz.shared.labels import visible
from attnlens.viz.shared.palette import BLUES

POOLING = "mean"  # how a block of positions becomes one cell (block_share)


@dataclass(frozen=True)
class HeadGrid:
    """Every head of one kind, thumbnail cells as bytes: cells (L, H, q, k) uint8 (encode's
    bytes), row_edges (q + 1,) and col_edges (k + 1,) the positions each block covers, one
    label per query and per key position, the head outlined (None: none), and how many query
    heads share a key/value head where the record says they do."""

    title: str
    cells: np.ndarray  # (L, H, q, k) uint8
    row_edges: tuple[int, ...]  # (q + 1,)
    col_edges: tuple[int, ...]  # (k + 1,)
    query_labels: tuple[str, ...]  # (Q,)
    key_labels: tuple[str, ...]  # (K,)
    selected: tuple[int, int] | None = None
    kv_group: int | None = None  # query heads per shared key/value head (GQA); None: one each
    # "norm": a cell is the share of what its queries carry, Σ αᵢⱼ ‖f_h(xⱼ)‖, from its keys
    measure: Measure = "weight"

    @property
    def pooled(self) -> bool:
        """Whether a cell stands for more than one query or key position."""
        q, k = self.cells.shape[2:]
        return (q, k) != (len(self.query_labels), len(self.key_labels))

    def note(self) -> str:
        """What a cell is, when it pools positions ('' when each cell is one position pair)."""
        if not self.pooled:
            return ""
        q, k = self.cells.shape[2:]
        size = (self.row_edges[1] - self.row_edges[0], self.col_edges[1] - self.col_edges[0])
        if self.measure == "norm":
            return (
                f"in {q}×{k} blocks of {size[0]}×{size[1]} positions: a cell is the share of "
                "what its queries carry, Σ αᵢⱼ ‖f(xⱼ)‖, that comes from its keys"
            )
        return (
            f"in {q}×{k} blocks of {size[0]}×{size[1]} positions: a cell is the {POOLING} over "
            "its queries of the share they give its keys"
        )

    @property
    def cell_name(self) -> str:
        """What the hover calls a cell's value."""
        if self.measure == "norm":
            return "norm share"
        return "mean share" if self.pooled else "weight"

    def data(self) -> dict[str, Any]:
        """The payload as JSON-ready values, cells as base64 of their bytes (C order)."""
        L, H, q, k = self.cells.shape
        return {
            "title": self.title,
            "shape": [L, H, q, k],
            "cells": base64.b64encode(np.ascontiguousarray(self.cells).tobytes()).decode("ascii"),
            "row_edges": list(self.row_edges),
            "col_edges": list(self.col_edges),
            "query_labels": list(self.query_labels),
            "key_labels": list(self.key_labels),
            "selected": None if self.selected is None else list(self.selected),
            "note": self.note(),
            "colors": colour_stops(),
            "ticks": [[tick_byte(s), f"{s:g}"] for s in SHARE_TICKS],
            "levels": LEVELS,
            "power": round(1 / GAMMA),
            "kv_group": self.kv_group,
            "measure": self.measure,
            "cell_name": self.cell_name,
        }


def head_grid(
    trace: Trace,
    kind: Kind,
    selected: tuple[int, int] | None = None,
    max_side: int = MAX_SIDE,
    max_cells: int = CELL_BUDGET,
    measure: Measure = "weight",
) -> HeadGrid:
    """Every head of `kind` as thumbnails of at most max_side × max_side cells and max_cells
    cells in all (one cell per position pair when they fit); `selected` is checked. measure
    "norm": a cell is the share of what its queries carry, Σ αᵢⱼ ‖f_h(xⱼ)‖, that comes from
    its keys (norm_share); on weights the same rule gives block_share's numbers."""
    if check_measure(measure) == "norm":
        carried = trace.head_norms(kind).carried  # a record without norms says why
    weights = attention_of(trace, kind)
    L, H, Q, K = weights.shape
    if selected is not None:
        check_layer(weights, selected[0])
        check_head(weights, selected[1])
    side = thumbnail_side(L, H, max_side, max_cells)
    q_edges, k_edges = block_edges(Q, side), block_edges(K, side)
    allowed = allowed_of(trace, kind)
    if measure == "norm":
        thumbs = norm_share(weights, carried, allowed, q_edges, k_edges)
    else:
        thumbs = block_share(weights, allowed, q_edges, k_edges)  # (L, H, q, k)
    return grid_of(trace, kind, thumbs, q_edges, k_edges, selected, measure)


def norm_share(
    weights: np.ndarray,
    carried: np.ndarray,
    allowed: np.ndarray,
    q_edges: np.ndarray,
    k_edges: np.ndarray,
) -> np.ndarray:
    """(L, H, q, k) float32: per block, Σ αᵢⱼ ‖f_h(xⱼ)‖ over its cells ÷ the same over its
    queries' every key (the share of what they carry that its keys gave), a layer at a time
    (no second L·H·Q·K array); NaN where no cell is allowed."""
    out = np.empty((*weights.shape[:2], len(q_edges) - 1, len(k_edges) - 1), dtype=np.float32)
    for layer in range(weights.shape[0]):
        given = weights[layer] * carried[layer][:, None, :]  # (H, Q, K)
        summed = np.add.reduceat(given, k_edges[:-1], axis=-1, dtype=np.float64)
        out[layer] = rows_share(np.add.reduceat(summed, q_edges[:-1], axis=-2))
    any_allowed = np.add.reduceat(np.add.reduceat(allowed, k_edges[:-1], 1), q_edges[:-1], 0)
    out[:, :, any_allowed == 0] = np.nan
    return out


def rows_share(summed: np.ndarray) -> np.ndarray:
    """(…, q, k): each block's sum over its row of blocks' total (0 where that is 0)."""
    total = summed.sum(-1, keepdims=True)
    share: np.ndarray = np.divide(summed, total, out=np.zeros_like(summed), where=total > 0)
    return share


def grid_of(
    trace: Trace,
    kind: Kind,
    shares: np.ndarray,
    row_edges: np.ndarray,
    col_edges: np.ndarray,
    selected: tuple[int, int] | None,
    measure: Measure = "weight",
) -> HeadGrid:
    """The HeadGrid of every head's thumbnail shares (L, H, q, k) over these block edges."""
    L, H = shares.shape[:2]
    queries, keys = grid_labels(trace, kind)
    group = kv_group(trace, kind)
    title = f"{KIND_TITLES[kind]}: {L} layers (rows) × {H} heads (columns)"
    if group is not None:  # grouped-query attention
        title = f"{KIND_TITLES[kind]}: {L} layers (rows) × {H} query heads (columns), framed "
        title += f"in groups of {group} that share a key/value head (GQA)"
    if measure == "norm":
        title += " · norm α‖f(x)‖: the share of what each head carries"
    return HeadGrid(
        title=title,
        cells=encode(shares),
        row_edges=tuple(int(e) for e in row_edges),
        col_edges=tuple(int(e) for e in col_edges),
        query_labels=queries,
        key_labels=keys,
        selected=selected,
        kv_group=group,
        measure=measure,
    )


def thumbnail_side(L: int, H: int, max_side: int = MAX_SIDE, max_cells: int = CELL_BUDGET) -> int:
    """Blocks per thumbnail side: at most max_side, and L·H·side² ≤ max_cells (1 at least)."""
    return max(1, min(max_side, math.isqrt(max_cells // (L * H))))


def grid_labels(
    trace: Trace, kind: Kind, rows: slice = slice(None), cols: slice = slice(None)
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """'i · token' for each query position in rows and key position in cols (every one by
    default), in the form a person reads; a decoder row of an encoder–decoder model as
    'i · input → produced', as on the heatmap. Only the positions asked for are formatted (a
    window of 8,192 tokens formats 2 × 8,192 labels, 25 ms, for the 192 it shows)."""
    queries, keys = trace.shown(kind)
    at_q, at_k = range(len(queries))[rows], range(len(keys))[cols]
    if kind == trace.self_kind:  # rows that read the input: its tokens
        return numbered(queries, at_q), numbered(keys, at_k)
    produced = [*queries[1:], "end"]
    labels = tuple(f"{i} · {visible(queries[i])} → {visible(produced[i])}" for i in at_q)
    return labels, numbered(keys, at_k)


def numbered(tokens: Sequence[str], at: Sequence[int] | None = None) -> tuple[str, ...]:
    """'i · token' per position (those `at`, else every one), the token made visible (a space
    as '␣'), as plain text."""
    return tuple(f"{i} · {visible(tokens[i])}" for i in (range(len(tokens)) if at is None else at))


def tick_byte(share: float) -> int:
    """The byte a share is drawn as (encode's), for the colour bar's ticks."""
    return int(encode(np.array([share], dtype=np.float32))[0])


def colour_stops() -> list[list[float]]:
    """[byte, r, g, b] stops of the palette's blues, evenly over the bytes 1..255 (∝ ∛share);
    between two stops the colour is interpolated, byte 0 is transparent."""
    n = len(BLUES) - 1
    return [[1 + i / n * LEVELS, *map(float, rgb)] for i, rgb in enumerate(BLUES)]
