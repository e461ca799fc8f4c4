"""One head's lines view as a compact payload for a canvas the browser draws (Explore): the
lines lines_view draws (weights ≥ min_weight, at most LINE_BUDGET, the strongest), binned and
sized as there, without an SVG element per line, hover point and label.

Lines travel as three base64 arrays (query and key positions as uint16, weights as float32):
3,000 lines are 24 KB of bytes. Tokens are plain text (the browser sets them as text).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlens.record.picking import KIND_TITLES, attention_of, check_head, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.lines.lines import (
    LABEL_GAP,
    LEVELS,
    LINE_BUDGET,
    drawn_lines,
    head_colour,
    left_out,
    rows_layout,
)
from attnlens.viz.shared.labels import visible

MAX_POSITIONS = 2**16  # positions fit a uint16
FIGURE_BYTES = 256 * 2**10  # a lines_view figure's layout, template and titles, at most
NUMBER_BYTES = 24  # a number in a figure's JSON at most
LINE_BYTES = 14 * NUMBER_BYTES + 120  # a line's 12 numbers, its hover point's 2, fixed text
CHAR_BYTES = 6  # a character of a token in JSON at most (as a \uXXXX escape)


@dataclass(frozen=True)
class LinesData:
    """The lines of one head: query[i] → key[i] with weight[i], strongest first; the tokens of
    both columns as read (raw: the token itself where it differs, else None); the layout
    lines_view would use at text_px (height, px per row, a label every k-th row)."""

    title: str
    head: int
    query: np.ndarray  # (n,) uint16
    key: np.ndarray  # (n,) uint16
    weight: np.ndarray  # (n,) float32
    queries: tuple[str, ...]
    keys: tuple[str, ...]
    queries_raw: tuple[str | None, ...]
    keys_raw: tuple[str | None, ...]
    height: int
    row_px: float
    every: int
    # the position of each query and key row where the columns hold a chosen few
    # (viz/lines/lines_range.py); None: row i is position i
    query_at: tuple[int, ...] | None = None
    key_at: tuple[int, ...] | None = None

    def figure_bound(self) -> int:
        """At most how many bytes the JSON of lines_view's figure for the same head takes
        (numbers counted as text, every character as an escape), counted without building it,
        so a download can be offered and the figure made only when it is clicked."""
        tokens = [*self.queries, *self.keys]
        tokens += [t for t in (*self.queries_raw, *self.keys_raw) if t is not None]
        longest = max((len(t) for t in tokens), default=0)
        per_line = LINE_BYTES + 4 * longest * CHAR_BYTES  # hover: both tokens, read and raw
        labels = sum(2 * (len(t) * CHAR_BYTES + LINE_BYTES) for t in tokens)
        title = len(self.title) * CHAR_BYTES
        return FIGURE_BYTES + title + int(self.query.size) * per_line + labels

    def data(self) -> dict[str, Any]:
        """The payload as JSON-ready values, the arrays as base64 of their little-endian bytes."""

        def b64(values: np.ndarray, dtype: str) -> str:
            return base64.b64encode(np.ascontiguousarray(values, dtype=dtype).tobytes()).decode()

        return {
            "title": self.title,
            "colour": head_colour(self.head),
            "count": int(self.query.size),
            "query": b64(self.query, "<u2"),
            "key": b64(self.key, "<u2"),
            "weight": b64(self.weight, "<f4"),
            "queries": list(self.queries),
            "keys": list(self.keys),
            "queries_raw": list(self.queries_raw),
            "keys_raw": list(self.keys_raw),
            "levels": list(LEVELS),
            "height": self.height,
            "row_px": self.row_px,
            "every": self.every,
            "label_gap": LABEL_GAP,
            "query_at": None if self.query_at is None else list(self.query_at),
            "key_at": None if self.key_at is None else list(self.key_at),
        }


def lines_data(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    min_weight: float = 0.02,
    text_px: int = 12,
    budget: int = LINE_BUDGET,
) -> LinesData:
    """The lines of (kind, layer, head) with weight ≥ min_weight, at most `budget` of them
    (the strongest), strongest first."""
    weights = attention_of(trace, kind)
    check_layer(weights, layer)
    check_head(weights, head)
    w = weights[layer, head]  # (Q, K)
    if max(w.shape) > MAX_POSITIONS:
        raise ValueError(f"{max(w.shape)} positions: the lines view draws at most {MAX_POSITIONS}")
    drawn = drawn_lines(w[None], min_weight, budget)[0]  # (Q, K)
    q, k = np.nonzero(drawn)
    order = np.argsort(-w[q, k], kind="stable")
    raw, shown = trace.tokens(kind), trace.shown(kind)
    height, row_px, every = rows_layout(max(w.shape), text_px)
    return LinesData(
        title=f"{KIND_TITLES[kind]}\nlayer {layer} · head {head}" + left_out(w, min_weight, drawn),
        head=head,
        query=q[order].astype(np.uint16),
        key=k[order].astype(np.uint16),
        weight=w[q, k][order].astype(np.float32),
        queries=tuple(visible(t) for t in shown[0]),
        keys=tuple(visible(t) for t in shown[1]),
        queries_raw=differing(raw[0], shown[0]),
        keys_raw=differing(raw[1], shown[1]),
        height=height,
        row_px=row_px,
        every=every,
    )


def differing(raw: tuple[str, ...], shown: tuple[str, ...]) -> tuple[str | None, ...]:
    """Each raw token made visible where it differs from the form shown, else None."""
    return tuple(None if r == s else visible(r) for r, s in zip(raw, shown, strict=True))
