"""Every head of a long input as thumbnails, from the overviews the record computed at trace
time (record/scores.py's Summary) rather than from T² weights of every head: the HeadGrid
(viz/heads/head_grid.py) Explore's every-head canvas draws, whatever the record keeps."""

from __future__ import annotations

import numpy as np

from attnlens.record.norms import Measure, check_measure
from attnlens.record.summary import NO_NORM_OVERVIEW, Summary
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.head_grid import HeadGrid, grid_of, head_grid, rows_share, thumbnail_side
from attnlens.viz.heads.head_window import blocks_allowed, check_head_of


def every_head_grid(
    trace: Trace,
    kind: Kind,
    selected: tuple[int, int] | None = None,
    measure: Measure = "weight",
) -> HeadGrid:
    """viz.head_grid's thumbnails: from the record's overviews where it keeps them (a long
    input's record holds no T² weights), else from the weights themselves. measure "norm":
    the share of what each block's queries carry that its keys gave (head_grid's), from the
    record's overview of the norms; a ValueError saying why where it keeps none."""
    summary = (trace.summaries or {}).get(kind)
    if summary is None:
        return head_grid(trace, kind, selected, measure=measure)
    if check_measure(measure) == "norm":
        trace.head_norms(kind)  # a record without norms says why
        if summary.overview_norm_mean is None:
            name = trace.model.name
            raise ValueError(f"{name}: no norms' overview of {kind}: {NO_NORM_OVERVIEW}")
    L, H = trace.model.shape(kind)
    if selected is not None:
        check_head_of(trace, kind, *selected)
    side = thumbnail_side(L, H)
    row_e, col_e = group_edges(summary.row_edges, side), group_edges(summary.col_edges, side)
    shares = summary_share(summary, row_e, col_e, measure)  # (L, H, q, k)
    allowed = np.zeros(shares.shape[2:], dtype=bool)
    for layer in range(L):  # the union over layers, as the weights' grid uses
        allowed |= blocks_allowed(trace, kind, layer, row_e, col_e)
    shares[:, :, ~allowed] = np.nan
    return grid_of(trace, kind, shares, row_e, col_e, selected, measure)


def group_edges(block_edges: np.ndarray, side: int) -> np.ndarray:
    """At most `side` groups of whole overview blocks, as position edges."""
    n = len(block_edges) - 1
    per = -(-n // side)
    return np.append(block_edges[:-1:per], block_edges[-1]).astype(np.int64)


def summary_share(
    summary: Summary, row_e: np.ndarray, col_e: np.ndarray, measure: Measure = "weight"
) -> np.ndarray:
    """(L, H, q, k) float32: per group of overview blocks, the mean over its queries of the
    share they give its keys (the weights' sum over the group's cells, over its queries:
    viz.model_view.block_share's number, from each block's mean weight × its cells); measure
    "norm": the share of what its queries carry from its keys (head_grid.norm_share's), from
    each block's mean αᵢⱼ ‖f(xⱼ)‖ × its cells over the row of groups' total."""
    kept = summary.overview_norm_mean if measure == "norm" else summary.overview_mean
    if kept is None:
        raise ValueError(NO_NORM_OVERVIEW)
    cells = np.outer(np.diff(summary.row_edges), np.diff(summary.col_edges))  # (B_q, B_k)
    summed = kept.astype(np.float64) * cells  # (L, H, B_q, B_k)
    rows_at = np.searchsorted(summary.row_edges, row_e[:-1])
    cols_at = np.searchsorted(summary.col_edges, col_e[:-1])
    summed = np.add.reduceat(np.add.reduceat(summed, cols_at, axis=-1), rows_at, axis=-2)
    if measure == "norm":
        return rows_share(summed).astype(np.float32)
    return (summed / np.diff(row_e)[:, None]).astype(np.float32)
