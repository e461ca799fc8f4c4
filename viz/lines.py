"""The lines view (as in BertViz / tensor2tensor): queries left, keys right, a line per weight."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from attnlens.record.trace import Kind, Trace
from attnlens.viz.labels import token_text
from attnlens.viz.picking import KIND_TITLES, attention_of, check_head, check_layer

LEVELS = (0.1, 0.25, 0.5, 0.75, 1.01)  # weights binned by upper edge; each bin one trace
HOVER_AT = 0.15  # hover points sit this far along each line, near the query


def lines_view(
    trace: Trace,
    kind: Kind,
    layer: int,
    heads: Sequence[int] | None = None,
    min_weight: float = 0.02,
) -> go.Figure:
    """A line from query i to key j per head, opacity and width growing with the weight."""
    weights = attention_of(trace, kind)
    check_layer(weights, layer)
    chosen = list(range(weights.shape[1])) if heads is None else list(heads)
    for h in chosen:
        check_head(weights, h)
    q_tokens, k_tokens = trace.tokens(kind)
    span = max(len(q_tokens), len(k_tokens))
    rows = (column_rows(len(q_tokens), span), column_rows(len(k_tokens), span))
    traces: list[go.Scatter] = []
    for h in chosen:
        colour = qualitative.Plotly[h % len(qualitative.Plotly)]
        traces += _head_lines(weights[layer, h], h, colour, min_weight, rows, trace.tokens(kind))
    traces += [_column(q_tokens, rows[0], 0.0, "left"), _column(k_tokens, rows[1], 1.0, "right")]
    fig = go.Figure(traces)
    shown = (
        "all heads"
        if heads is None
        else "head" + "s" * (len(chosen) > 1) + " " + ", ".join(map(str, chosen))
    )
    fig.update_layout(
        title=f"{KIND_TITLES[kind]}<br>layer {layer} · {shown}",
        xaxis={"visible": False, "range": [-0.6, 1.6]},
        yaxis={"visible": False, "autorange": "reversed"},
        plot_bgcolor="white",
        height=max(400, 22 * span + 120),
        legend={"title": "head"},
    )
    return fig


def column_rows(n: int, span: int) -> np.ndarray:
    """Heights of n tokens spread over the rows of the longer column: (n,)."""
    return np.arange(n) * ((span - 1) / (n - 1) if n > 1 else 0.0)


def _head_lines(
    w: np.ndarray,
    head: int,
    colour: str,
    min_weight: float,
    rows: tuple[np.ndarray, np.ndarray],
    tokens: tuple[tuple[str, ...], tuple[str, ...]],
) -> list[go.Scatter]:
    """A legend entry, one trace per weight bin (a trace has one width), and hover points."""
    group = {"legendgroup": str(head), "name": f"head {head}"}
    legend = go.Scatter(
        x=[None], y=[None], mode="lines", line={"color": colour, "width": 4}, **group
    )
    out: list[go.Scatter] = [legend]
    low = min_weight
    for n, high in enumerate(LEVELS):
        q, k = np.nonzero((w >= low) & (w < high))
        low = max(high, min_weight)
        if q.size:
            ys = np.column_stack([rows[0][q], rows[1][k], np.full(q.size, np.nan)]).ravel()
            line = {"color": colour, "width": 1 + 2.5 * n}
            opacity = min(1.0, 0.2 + 0.2 * n)
            out.append(_segments(ys, line, opacity, group, q, k))
    out.append(_hover_points(w, head, colour, min_weight, rows, tokens, group))
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


def _hover_points(
    w: np.ndarray, head: int, colour: str, min_weight: float,
    rows: tuple[np.ndarray, np.ndarray], tokens: tuple[tuple[str, ...], tuple[str, ...]],
    group: dict[str, str],
) -> go.Scatter:  # fmt: skip
    q, k = np.nonzero(w >= min_weight)
    qt, kt = tokens
    hover = [
        f"head {head}<br>query {i} {token_text(qt[i])} → key {j} {token_text(kt[j])}"
        f"<br>weight {w[i, j]:.7g}"
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


def _column(tokens: tuple[str, ...], rows: np.ndarray, x: float, side: str) -> go.Scatter:
    """Token labels in one column; each position its own row, even for repeated tokens."""
    labels = [token_text(t) for t in tokens]
    return go.Scatter(
        x=np.full(len(tokens), x),
        y=rows,
        mode="text",
        text=labels,
        textposition=f"middle {side}",
        hovertext=[f"position {i} {t}" for i, t in enumerate(labels)],
        hoverinfo="text",
        showlegend=False,
    )
