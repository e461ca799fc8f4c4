"""Masks (§3.2.3): the masks one kind of attention applies, and the mask as applied."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.heatmap import cell_gap
from attnlens.viz.shared.labels import positions_axis
from attnlens.viz.shared.style import panel_title

ALLOWED, BLOCKED = "rgb(158,202,225)", "rgb(60,60,60)"
APPLIES: dict[str, tuple[str, ...]] = {  # the masks each kind of attention applies (§3.2.3)
    "encoder_self": ("padding",),
    "decoder_self": ("padding", "causal"),
    "cross": ("padding",),
}
PANEL_TITLES = {
    "padding": "padding (filler keys)",
    "causal": "causal (no peeking ahead)",
    "applied": "applied",
}


def mask_parts(trace: Trace, kind: Kind) -> dict[str, np.ndarray]:
    """(Q, K) boolean masks this kind applies (padding; causal on decoder self-attention) and
    the one applied; True = may attend.

    Padding is read off the applied mask: a key no query may attend to is padding.
    """
    applied = allowed_of(trace, kind)
    Q, K = applied.shape
    parts = {"padding": np.broadcast_to(applied.any(0, keepdims=True), (Q, K))}
    if "causal" in APPLIES[kind]:
        parts["causal"] = np.tril(np.ones((Q, K), dtype=bool))
    return {**parts, "applied": applied}


def masks_view(trace: Trace, kind: Kind) -> go.Figure:
    """A panel per mask this kind applies, then the mask as applied; a legend says which
    colour lets a query attend."""
    attention_of(trace, kind)  # the kind must be recorded
    parts = mask_parts(trace, kind)
    rows = positions_axis(trace.tokens(kind)[0], trace.shown(kind)[0])
    cols = positions_axis(trace.tokens(kind)[1], trace.shown(kind)[1])
    titles = [PANEL_TITLES[name] for name in parts]
    fig = make_subplots(rows=1, cols=len(parts), subplot_titles=titles, shared_yaxes=True)
    for col, (name, m) in enumerate(parts.items(), start=1):
        fig.add_trace(_panel(name, m, cols.values, rows.values), row=1, col=col)
    for name, colour in (("may attend", ALLOWED), ("blocked", BLOCKED)):
        fig.add_trace(_legend_entry(name, colour), row=1, col=1)
    # keys below the panels: on top they would run into the panel titles
    fig.update_xaxes(type="category", side="bottom", automargin=True, **cols.ticks)
    fig.update_yaxes(type="category", autorange="reversed", automargin=True, **rows.ticks)
    note = _note(parts, trace.mask(kind) is None)
    fig.update_layout(panel_title(f"masks of {KIND_TITLES[kind]}<br>{note}"))
    fig.update_layout(margin={"l": 10, "r": 10, "b": 10}, legend={"title": {"text": "query → key"}})
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
        xgap=cell_gap(len(x)),
        ygap=cell_gap(len(y)),
        name=name,
    )


def _legend_entry(name: str, colour: str) -> go.Scatter:
    """A legend swatch for one cell colour (no point of its own on the panels)."""
    return go.Scatter(
        x=[None],
        y=[None],
        mode="markers",
        marker={"symbol": "square", "size": 14, "color": colour},
        name=name,
        showlegend=True,
        hoverinfo="skip",
    )


def _note(parts: dict[str, np.ndarray], missing: bool) -> str:
    if missing:
        return "the record holds no mask: everything allowed"
    combined = np.logical_and.reduce([m for name, m in parts.items() if name != "applied"])
    formula = " ∧ ".join(name for name in parts if name != "applied")
    differ = int((parts["applied"] != combined).sum())
    if differ:
        return f"applied differs from {formula} in {differ} cells"
    if parts["applied"].all():
        return f"applied = {formula}: nothing blocked, every query may attend to every key"
    return f"applied = {formula}"
