"""The lines view (as in BertViz / tensor2tensor): queries left, keys right, a line per weight."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from model.trace import Kind, Trace
from viz.labels import token_text
from viz.select import KIND_TITLES, attention_of, check_head, check_layer

LEVELS = (0.1, 0.25, 0.5, 0.75, 1.01)  # weights binned by upper edge; each bin one trace
HOVER_AT = 0.15  # hover points sit this far along each line


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
    traces: list[go.Scatter] = []
    for h in chosen:
        colour = qualitative.Plotly[h % len(qualitative.Plotly)]
        w = weights[layer, h]  # (Q, K)
        traces += _head_lines(w, h, colour, min_weight, q_tokens, k_tokens)
    traces += [_column(q_tokens, 0.0, "right"), _column(k_tokens, 1.0, "left")]
    fig = go.Figure(traces)
    shown = "all heads" if heads is None else "heads " + ", ".join(map(str, chosen))
    fig.update_layout(
        title=f"{KIND_TITLES[kind]} · layer {layer} · {shown}",
        xaxis={"visible": False, "range": [-0.6, 1.6]},
        yaxis={"visible": False, "autorange": "reversed"},
        plot_bgcolor="white",
        height=max(400, 22 * max(len(q_tokens), len(k_tokens)) + 120),
        legend={"title": "head"},
    )
    return fig


def _head_lines(
    w: np.ndarray,
    head: int,
    colour: str,
    min_weight: float,
    q_tokens: tuple[str, ...],
    k_tokens: tuple[str, ...],
) -> list[go.Scatter]:
    """One trace per weight bin (a trace has one width), plus hover points near the query end."""
    out: list[go.Scatter] = []
    low = min_weight
    for n, high in enumerate(LEVELS):
        q, k = np.nonzero((w >= low) & (w < high))
        low = max(high, min_weight)
        if q.size == 0:
            continue
        xs = np.tile([0.0, 1.0, np.nan], q.size)
        ys = np.column_stack([q, k, np.full(q.size, np.nan)]).ravel()
        line = {"color": colour, "width": 1 + 2.5 * n}
        out.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=line,
                opacity=min(1.0, 0.2 + 0.2 * n),
                hoverinfo="skip",
                legendgroup=str(head),
                name=f"head {head}",
                showlegend=not out,
            )
        )
    q, k = np.nonzero(w >= min_weight)
    hover = [
        f"head {head}<br>query {i} {token_text(q_tokens[i])} → key {j} {token_text(k_tokens[j])}"
        f"<br>weight {w[i, j]:.7g}"
        for i, j in zip(q, k, strict=True)
    ]
    out.append(  # near the query end, where the line starts
        go.Scatter(
            x=np.full(q.size, HOVER_AT),
            y=q + HOVER_AT * (k - q),
            mode="markers",
            hovertext=hover,
            hoverinfo="text",
            marker={"size": 6, "color": colour, "opacity": 0},
            legendgroup=str(head),
            showlegend=False,
            name=f"head {head}",
        )
    )
    return out


def _column(tokens: tuple[str, ...], x: float, side: str) -> go.Scatter:
    """Token labels in one column; each position its own row, even for repeated tokens."""
    labels = [token_text(t) for t in tokens]
    return go.Scatter(
        x=np.full(len(tokens), x),
        y=np.arange(len(tokens)),
        mode="text",
        text=labels,
        textposition=f"middle {side}",
        hovertext=[f"position {i} {t}" for i, t in enumerate(labels)],
        hoverinfo="text",
        showlegend=False,
    )
