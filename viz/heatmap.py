"""The head heatmap: one layer, one head, one kind of attention, queries × keys."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.trace import Kind, Trace
from viz.labels import position_labels, visible

KIND_TITLES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention (decoder → encoder)",
}


def head_heatmap(trace: Trace, kind: Kind, layer: int, head: int) -> go.Figure:
    """Query tokens on rows, key tokens on columns; masked cells are blank, not a low weight."""
    weights = trace.attention(kind)
    if weights is None:
        raise ValueError(
            f"{trace.model.name} records no {kind} attention; it has {', '.join(trace.kinds)}"
        )
    L, H = weights.shape[:2]
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"layer {layer}, head {head} is outside {L} layers × {H} heads")
    w = weights[layer, head]  # (Q, K)
    mask = trace.mask(kind)
    allowed = np.ones_like(w, dtype=bool) if mask is None else mask
    q_tokens, k_tokens = trace.tokens(kind)
    shown = np.where(allowed, w, np.nan)  # masked cells are gaps, drawn in the background colour
    hover = _hover(q_tokens, k_tokens, w, allowed)
    fig = go.Figure(
        go.Heatmap(
            z=shown,
            x=position_labels(k_tokens),
            y=position_labels(q_tokens),
            zmin=0.0,
            zmax=1.0,
            colorscale="Blues",
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            colorbar={"title": "weight"},
            xgap=1,
            ygap=1,
        )
    )
    fig.update_layout(
        title=f"{KIND_TITLES[kind]} · layer {layer} · head {head}",
        xaxis={"title": "key", "type": "category", "tickangle": 0, "side": "top"},
        yaxis={"title": "query", "type": "category", "autorange": "reversed"},
        plot_bgcolor="rgba(200,200,200,0.35)",
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
    )
    return fig


def _hover(
    q_tokens: tuple[str, ...], k_tokens: tuple[str, ...], w: np.ndarray, allowed: np.ndarray
) -> np.ndarray:
    """Hover text per cell. Plotly renders hover text as markup, so '<' and '>' are escaped."""
    q = [_escape(visible(t)) for t in q_tokens]
    k = [_escape(visible(t)) for t in k_tokens]
    out = np.empty(w.shape, dtype=object)
    for i, qt in enumerate(q):
        for j, kt in enumerate(k):
            value = f"{w[i, j]:.6f}" if allowed[i, j] else "masked (not allowed)"
            out[i, j] = f"query {i} {qt!r} → key {j} {kt!r}<br>weight {value}"
    return out


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
