"""The lines view (as in BertViz / tensor2tensor): queries left, keys right, a line per weight."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlens.record.picking import KIND_TITLES, attention_of, check_head, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.shared.labels import token_text
from attnlens.viz.shared.palette import HEAD_COLOURS

LEVELS = (0.1, 0.25, 0.5, 0.75, 1.01)  # weights binned by upper edge; each bin one trace
HOVER_AT = 0.15  # hover points sit this far along each line, near the query
LABEL_GAP = 0.04  # labels stand this far off the line ends, so no line covers them
ROW_PX, MIN_HEIGHT, MAX_HEIGHT = 22, 400, 600  # a row while the view fits the bounds
PROJECTED_MAX_HEIGHT = 700  # larger text (a projector) needs taller rows
FRAME_PX = 120  # title and margins
LINE_BUDGET = 3000  # lines drawn at most (the strongest), so a long input stays light and legible


def lines_view(
    trace: Trace,
    kind: Kind,
    layer: int,
    heads: Sequence[int] | None = None,
    min_weight: float = 0.02,
    text_px: int = 12,
) -> go.Figure:
    """A line from query i to key j per head for each weight ≥ min_weight, opacity and width
    growing with the weight.

    The height is bounded: past ~30 positions rows draw closer and only every k-th token is
    labelled (rows at least text_px + 2 apart), each still named by the hover. At most
    LINE_BUDGET lines are drawn, the strongest ones; the title says when some are left out.
    """
    weights = attention_of(trace, kind)
    check_layer(weights, layer)
    chosen = list(range(weights.shape[1])) if heads is None else list(heads)
    for h in chosen:
        check_head(weights, h)
    raw, shown = trace.tokens(kind), trace.shown(kind)
    span = max(len(raw[0]), len(raw[1]))
    height, row_px, every = rows_layout(span, text_px)
    rows = (column_rows(len(raw[0]), span), column_rows(len(raw[1]), span))
    w = weights[layer, chosen]  # (H', Q, K)
    drawn = drawn_lines(w, min_weight, LINE_BUDGET)
    traces: list[go.Scatter] = []
    for n, h in enumerate(chosen):
        traces += _head_lines(w[n], drawn[n], h, head_colour(h), rows, raw, shown, row_px)
    traces += [
        _column(raw[0], shown[0], rows[0], -LABEL_GAP, "left", every),
        _column(raw[1], shown[1], rows[1], 1 + LABEL_GAP, "right", every),
    ]
    fig = go.Figure(traces)
    fig.update_layout(
        title=_title(kind, layer, heads, chosen, w, min_weight, drawn),
        xaxis={"visible": False, "range": [-0.6, 1.6]},
        yaxis={"visible": False, "autorange": "reversed"},
        plot_bgcolor="white",
        height=height,
        showlegend=len(chosen) > 1,  # one head: the title names it
        legend={"title": {"text": "head"}},
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
    )
    return fig


def rows_layout(span: int, text_px: int) -> tuple[int, float, int]:
    """(figure height px, px per row, label every k-th row) for `span` rows of text_px text:
    rows ROW_PX apart (more for larger text) until the height reaches its cap."""
    row = max(ROW_PX, text_px + 6)  # short inputs: every label has room
    cap = MAX_HEIGHT if text_px <= ROW_PX - 6 else PROJECTED_MAX_HEIGHT
    height = int(min(cap, max(MIN_HEIGHT, row * span + FRAME_PX)))
    row_px = (height - FRAME_PX) / max(span, 1)
    return height, row_px, max(1, math.ceil((text_px + 2) / row_px))


def head_colour(head: int) -> str:
    """A head's colour in the lines view (the palette's HEAD_COLOURS, by head)."""
    return HEAD_COLOURS[head % len(HEAD_COLOURS)]


def _title(
    kind: Kind, layer: int, heads: Sequence[int] | None, chosen: list[int], w: np.ndarray,
    min_weight: float, drawn: np.ndarray,
) -> str:  # fmt: skip
    shown = (
        "all heads"
        if heads is None
        else "head" + "s" * (len(chosen) > 1) + " " + ", ".join(map(str, chosen))
    )
    return f"{KIND_TITLES[kind]}<br>layer {layer} · {shown}" + left_out(w, min_weight, drawn)


def left_out(w: np.ndarray, min_weight: float, drawn: np.ndarray) -> str:
    """' · the strongest N of M lines' when the budget left some out, else ''."""
    above = int((w >= min_weight).sum())
    if drawn.sum() < above:
        return f" · the strongest {int(drawn.sum())} of {above} lines"
    return ""


def drawn_lines(w: np.ndarray, min_weight: float, budget: int) -> np.ndarray:
    """Which weights get a line: those ≥ min_weight, or the `budget` largest of them."""
    above: np.ndarray = w >= min_weight
    if above.sum() <= budget:
        return above
    flat = np.where(above, w, -1.0).ravel()
    keep = np.zeros(flat.size, dtype=bool)
    keep[np.argpartition(flat, flat.size - budget)[flat.size - budget :]] = True
    return keep.reshape(w.shape)


def column_rows(n: int, span: int) -> np.ndarray:
    """Heights of n tokens spread over the rows of the longer column: (n,)."""
    return np.arange(n) * ((span - 1) / (n - 1) if n > 1 else 0.0)


def _head_lines(
    w: np.ndarray,
    drawn: np.ndarray,
    head: int,
    colour: str,
    rows: tuple[np.ndarray, np.ndarray],
    raw: tuple[tuple[str, ...], tuple[str, ...]],
    shown: tuple[tuple[str, ...], tuple[str, ...]],
    row_px: float,
) -> list[go.Scatter]:
    """A legend entry, one trace per weight bin (a trace has one width), and hover points,
    for the weights `drawn` (Q, K). Lines are never thicker than 0.8 of a row, so they cannot
    merge into bars."""
    group = {"legendgroup": str(head), "name": f"head {head}"}
    legend = go.Scatter(
        x=[None], y=[None], mode="lines", line={"color": colour, "width": 4}, **group
    )
    out: list[go.Scatter] = [legend]
    low = -np.inf
    widest = max(1.0, 0.8 * row_px)
    for n, high in enumerate(LEVELS):
        q, k = np.nonzero(drawn & (w >= low) & (w < high))
        low = high
        if q.size:
            ys = np.column_stack([rows[0][q], rows[1][k], np.full(q.size, np.nan)]).ravel()
            line = {"color": colour, "width": min(1 + 1.2 * n, widest)}  # 1 to 5.8 px
            opacity = min(1.0, 0.2 + 0.2 * n)
            out.append(_segments(ys, line, opacity, group, q, k))
    out.append(_hover_points(w, drawn, head, colour, rows, raw, shown, group))
    return out


def _segments(
    ys: np.ndarray, line: dict[str, object], opacity: float, group: dict[str, str],
    q: np.ndarray, k: np.ndarray,
) -> go.Scatter:  # fmt: skip
    """Lines from x=0 to x=1, separated by gaps; customdata keeps (query, key) of each."""
    return go.Scatter(
        x=np.tile([0.0, 1.0, np.nan], q.size),
        y=ys,
        mode="lines",
        line=line,
        opacity=opacity,
        hoverinfo="skip",
        showlegend=False,
        customdata=np.repeat(np.column_stack([q, k]), 3, axis=0),  # (3n, 2)
        **group,
    )


def _named(i: int, raw: str, shown: str) -> str:
    """Position i's token as read, and the raw token where it differs."""
    return f"{i} {token_text(shown)}" + ("" if raw == shown else f" (token {token_text(raw)})")


def _hover_points(
    w: np.ndarray, drawn: np.ndarray, head: int, colour: str,
    rows: tuple[np.ndarray, np.ndarray], raw: tuple[tuple[str, ...], tuple[str, ...]],
    shown: tuple[tuple[str, ...], tuple[str, ...]], group: dict[str, str],
) -> go.Scatter:  # fmt: skip
    q, k = np.nonzero(drawn)
    hover = [
        f"head {head}<br>query {_named(int(i), raw[0][i], shown[0][i])}"
        f" → key {_named(int(j), raw[1][j], shown[1][j])}<br>weight {w[i, j]:.7g}"
        for i, j in zip(q, k, strict=True)
    ]
    y = rows[0][q] + HOVER_AT * (rows[1][k] - rows[0][q])
    return go.Scatter(
        x=np.full(q.size, HOVER_AT),
        y=y,
        mode="markers",
        hovertext=hover,
        hoverinfo="text",
        marker={"size": 6, "color": colour, "opacity": 0},
        showlegend=False,
        **group,
    )


def _column(
    raw: tuple[str, ...], shown: tuple[str, ...], rows: np.ndarray, x: float, side: str,
    every: int,
) -> go.Scatter:  # fmt: skip
    """Token labels in one column, each position its own row even for repeated tokens; on a
    long input only every `every`-th is written, with its position (the hover names all)."""
    if every == 1:
        labels = [token_text(t) for t in shown]
    else:
        labels = [f"{i} · {token_text(t)}" if i % every == 0 else "" for i, t in enumerate(shown)]
    return go.Scatter(
        x=np.full(len(raw), x),
        y=rows,
        mode="text",
        text=labels,
        textposition=f"middle {side}",
        hovertext=[
            f"position {_named(i, r, s)}" for i, (r, s) in enumerate(zip(raw, shown, strict=True))
        ],
        hoverinfo="text",
        showlegend=False,
    )
