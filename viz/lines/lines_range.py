"""The lines view of a chosen range of queries at any length: at most RANGE_QUERIES queries in a
row, each drawn to its TOP_KEYS heaviest keys of weight ≥ MIN_WEIGHT, the weights exact from the
record (Trace.head over the keys those rows can reach, one block of rows × keys at a time). A
head that spreads its weight so thin that none reaches MIN_WEIGHT (random weights at 4,000
tokens: each about 1/4,000) gets each query's heaviest keys all the same, the title saying so:
an empty panel said nothing.

The payload is viz/lines/lines_data.py's LinesData, its columns holding only the chosen queries and
the keys their lines reach (at most MAX_KEYS, those with the most weight drawn to them), each row
named by its position: at most RANGE_QUERIES × TOP_KEYS lines, whatever the input's length.
"""

from __future__ import annotations

import numpy as np

from attnlens.record.picking import KIND_TITLES
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.head_window import check_head_of
from attnlens.viz.lines.lines import rows_layout
from attnlens.viz.lines.lines_data import LinesData, differing
from attnlens.viz.shared.labels import visible

RANGE_QUERIES = 256  # queries in one lines view at most
TOP_KEYS = 8  # lines per query at most: its heaviest keys
MIN_WEIGHT = 0.001  # a lighter weight draws no line (it would not show)
MAX_KEYS = 256  # keys in the right column at most


def default_start(n_queries: int, queries: int = RANGE_QUERIES) -> int:
    """The first query of the last `queries` queries (the range a long input opens on)."""
    return max(0, n_queries - queries)


def lines_range(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    start: int,
    queries: int = RANGE_QUERIES,
    text_px: int = 12,
    top: int = TOP_KEYS,
    min_weight: float = MIN_WEIGHT,
) -> LinesData:
    """Queries start..start+queries-1 (clipped to the head; at most RANGE_QUERIES) of (kind,
    layer, head), each to its `top` heaviest keys of weight ≥ min_weight; a ValueError
    naming the value for a start outside the head."""
    Q, K = check_head_of(trace, kind, layer, head)
    if not 0 <= start < Q:
        raise ValueError(f"the first query {start} is outside 0..{Q - 1}")
    if not 1 <= queries <= RANGE_QUERIES:
        raise ValueError(f"{queries} queries: the lines view draws 1 to {RANGE_QUERIES}")
    stop = min(Q, start + queries)
    lo, hi = reach(trace, kind, layer, start, stop, K)
    w = np.asarray(trace.head(kind, layer, head, slice(start, stop), slice(lo, hi)))  # (r, c)
    q, k = heaviest(w, top, min_weight)
    spread = not len(q) and w.size > 0  # no weight reaches min_weight: a head spread thin
    if spread:  # each query's heaviest keys all the same (an empty panel said nothing)
        q, k = heaviest(w, top, 0.0)
    reached = len(np.unique(k))
    keys, kept = key_column(k, w[q, k], MAX_KEYS)
    q, k = q[kept], k[kept]
    order = np.lexsort((q, -w[q, k]))  # strongest first
    q, k = q[order], k[order]
    weight = w[q, k].astype(np.float32)
    key_at = tuple(int(j) + lo for j in keys)
    query_at = tuple(range(start, stop))
    raw, shown = trace.tokens(kind), trace.shown(kind)
    height, row_px, every = rows_layout(max(len(query_at), len(key_at), 1), text_px)
    title = (
        f"{KIND_TITLES[kind]}\nlayer {layer} · head {head} · queries {start}–{stop - 1}, "
        f"each to its {top} heaviest keys of weight ≥ {min_weight:g}"
    )
    if len(keys) < reached:
        title += f" (the {len(keys)} keys weighed most of {reached})"
    if spread:
        title += (
            f"; no weight of these queries reaches {min_weight:g} (the largest is "
            f"{float(w.max()):.2g}: the head spreads its weight), so each query's {top} "
            "heaviest keys are drawn"
        )
    return LinesData(
        title=title,
        head=head,
        query=q.astype(np.uint16),
        key=np.searchsorted(keys, k).astype(np.uint16),
        weight=weight,
        queries=tuple(visible(shown[0][i]) for i in query_at),
        keys=tuple(visible(shown[1][j]) for j in key_at),
        queries_raw=differing(picked(raw[0], query_at), picked(shown[0], query_at)),
        keys_raw=differing(picked(raw[1], key_at), picked(shown[1], key_at)),
        height=height,
        row_px=row_px,
        every=every,
        query_at=query_at,
        key_at=key_at,
    )


def picked(tokens: tuple[str, ...], at: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(tokens[i] for i in at)


def reach(trace: Trace, kind: Kind, layer: int, start: int, stop: int, K: int) -> tuple[int, int]:
    """The keys queries start..stop-1 can attend to, as one range (all keys where the record
    keeps weights)."""
    if trace.scores and kind in trace.scores and getattr(trace, kind) is None:
        return trace.scores[kind][layer].reach(start, stop)
    return 0, K


def heaviest(w: np.ndarray, top: int, min_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of each row's `top` largest weights that are ≥ min_weight. A row with at
    most `top` of them keeps them all, found without sorting: over a long input most weights of
    a row are below min_weight (192 queries × 6,592 keys at 8,192 tokens: a partition of every
    row took 30 ms)."""
    n = min(top, w.shape[1])
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    heavy = w >= min_weight  # (r, c)
    many = heavy.sum(1) > n  # (r,) rows with more heavy weights than lines
    rows, cols = np.nonzero(heavy & ~many[:, None])
    if many.any():
        picked = np.argpartition(w[many], w.shape[1] - n, axis=1)[:, -n:]  # (m, n): all heavy
        rows = np.concatenate([rows, np.repeat(np.flatnonzero(many), n)])
        cols = np.concatenate([cols, picked.ravel()])
    return rows, cols


def key_column(k: np.ndarray, weight: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """The keys (sorted) the lines reach, at most `most` of them, those with the most weight
    drawn to them; and which lines reach a key kept."""
    keys, at = np.unique(k, return_inverse=True)
    if len(keys) <= most:
        return keys, np.ones(len(k), dtype=bool)
    total = np.bincount(at, weights=weight, minlength=len(keys))
    chosen = np.sort(np.argsort(-total, kind="stable")[:most])
    return keys[chosen], np.isin(at, chosen)
