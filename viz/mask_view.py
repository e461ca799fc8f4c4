"""Masks (§3.2.3): padding, causal, and the combination the model actually applied."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.trace import Kind, Trace
from attnlens.viz.labels import position_labels
from attnlens.viz.picking import KIND_TITLES, allowed_of, attention_of

ALLOWED, BLOCKED = "rgb(198,219,239)", "rgb(60,60,60)"


def mask_parts(trace: Trace, kind: Kind) -> dict[str, np.ndarray]:
    """(Q, K) boolean masks: padding, causal and applied; True = may attend.

    Padding is read off the applied mask: a key no query may attend to is padding.
    """
    applied = allowed_of(trace, kind)
    Q, K = applied.shape
    padding = np.broadcast_to(applied.any(0, keepdims=True), (Q, K))
    causal = (
        np.tril(np.ones((Q, K), dtype=bool)) if kind == "decoder_self" else np.ones((Q, K), bool)
    )
    return {"padding": padding, "causal": causal, "applied": applied}


def masks_view(trace: Trace, kind: Kind) -> go.Figure:
    """Three panels side by side: padding, causal, and the mask as applied."""
    attention_of(trace, kind)  # the kind must be recorded
    parts = mask_parts(trace, kind)
    q_tokens, k_tokens = trace.tokens(kind)
    x, y = position_labels(k_tokens), position_labels(q_tokens)
    names = ["padding", "causal (no peeking ahead)", "applied"]
    fig = make_subplots(rows=1, cols=3, subplot_titles=names, shared_yaxes=True)
    for col, (name, m) in enumerate(parts.items(), start=1):
        fig.add_trace(_panel(name, m, x, y), row=1, col=col)
    # keys below the panels: on top they would run into the panel titles
    fig.update_xaxes(type="category", side="bottom", showticklabels=len(x) <= 64)
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=len(y) <= 64)
    fig.update_layout(
        title=f"masks of {KIND_TITLES[kind]}{_note(parts, trace.mask(kind) is None)}",
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
    )
    return fig


def _panel(name: str, m: np.ndarray, x: list[str], y: list[str]) -> go.Heatmap:
    return go.Heatmap(
        z=m.astype(np.int8),
        x=x,
        y=y,
        zmin=0,
        zmax=1,
        colorscale=[[0.0, BLOCKED], [0.5, BLOCKED], [0.5, ALLOWED], [1.0, ALLOWED]],
        showscale=False,
        # z, not per-cell text: at 512 tokens three panels of words would weigh ~8 MB
        hovertemplate=f"{name}<br>query %{{y}}<br>key %{{x}}<br>may attend (1 yes, 0 no): %{{z}}"
        "<extra></extra>",
        xgap=1,
        ygap=1,
        name=name,
    )


def _note(parts: dict[str, np.ndarray], missing: bool) -> str:
    if missing:
        return " · the record holds no mask: everything allowed"
    differ = int((parts["applied"] != (parts["padding"] & parts["causal"])).sum())
    if differ:
        return f" · applied differs from padding ∧ causal in {differ} cells"
    return " · applied = padding ∧ causal"
