"""Masks (§3.2.3): the masks one kind of attention applies, and the mask as applied."""

from __future__ import annotations

import itertools

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.picking import KIND_TITLES, allowed_of
from attnlens.record.summary import edges
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.heatmap import cell_gap
from attnlens.viz.lecture.panels import mask_panel
from attnlens.viz.shared.labels import positions_axis
from attnlens.viz.shared.palette import ALLOWED, BLOCKED
from attnlens.viz.shared.style import panel_title

APPLIES: dict[str, tuple[str, ...]] = {  # the masks each kind of attention applies (§3.2.3)
    "encoder_self": ("padding",),
    "decoder_self": ("padding", "causal"),
    "cross": ("padding",),
}
POOL_FROM = 256  # positions a side past which each cell is a block of positions
BLOCKS = 64  # blocks a side at most: three panels stay within an SVG's vector cells
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
    colour lets a query attend. Past POOL_FROM positions a side each cell is a block of
    positions coloured by the share of it that may attend (a long input's record keeps what
    its weights were computed from, and its mask as the rules it applied: never T² of cells
    sent to the browser, 48 M of them at 4,000 tokens)."""
    if kind not in trace.kinds:  # the kind must be recorded (its weights never rebuilt here)
        there = ", ".join(trace.kinds) or "none"
        raise ValueError(f"{trace.model.name} records no {kind} attention; it has {there}")
    parts = mask_parts(trace, kind)
    Q, K = parts["applied"].shape
    pooled = max(Q, K) > POOL_FROM
    if pooled:
        rows_at, cols_at = edges(Q, BLOCKS), edges(K, BLOCKS)
        shown = {name: _pooled(m, rows_at, cols_at) for name, m in parts.items()}
        y, x = _spans(rows_at), _spans(cols_at)
        y_ticks: dict[str, object] = {}
        x_ticks: dict[str, object] = {}
    else:
        shown = {name: m.astype(np.int8) for name, m in parts.items()}
        rows = positions_axis(trace.tokens(kind)[0], trace.shown(kind)[0])
        cols = positions_axis(trace.tokens(kind)[1], trace.shown(kind)[1])
        y, x, y_ticks, x_ticks = rows.values, cols.values, rows.ticks, cols.ticks
    titles = [PANEL_TITLES[name] for name in parts]
    fig = make_subplots(rows=1, cols=len(parts), subplot_titles=titles, shared_yaxes=True)
    for col, (name, m) in enumerate(shown.items(), start=1):
        fig.add_trace(_panel(name, m, x, y, pooled), row=1, col=col)
    for name, colour in (("may attend", ALLOWED), ("blocked", BLOCKED)):
        fig.add_trace(_legend_entry(name, colour), row=1, col=1)
    # keys below the panels: on top they would run into the panel titles
    fig.update_xaxes(type="category", side="bottom", automargin=True, **x_ticks)
    fig.update_yaxes(type="category", autorange="reversed", automargin=True, **y_ticks)
    note = _note(parts, trace.mask(kind) is None)
    if pooled:
        block = f"{int(rows_at[1] - rows_at[0])}×{int(cols_at[1] - cols_at[0])}"
        note += f"<br>{Q:,} × {K:,} positions in blocks of {block}: a cell is its share allowed"
    fig.update_layout(panel_title(f"masks of {KIND_TITLES[kind]}<br>{note}"))
    fig.update_layout(margin={"l": 10, "r": 10, "b": 10}, legend={"title": {"text": "query → key"}})
    return fig


def _panel(name: str, m: np.ndarray, x: list[str], y: list[str], pooled: bool) -> go.Heatmap:
    """One mask's panel: a cell a query and key (lecture/panels.py), or past POOL_FROM a block
    coloured by the share of it that may attend."""
    gaps = (cell_gap(len(x)), cell_gap(len(y)))
    if not pooled:
        return mask_panel(m, x, y, name, gaps, name)
    return go.Heatmap(
        z=m,
        x=x,
        y=y,
        zmin=0,
        zmax=1,
        colorscale=[[0.0, BLOCKED], [1.0, ALLOWED]],
        showscale=False,
        hovertemplate=f"{name}<br>query %{{y}}<br>key %{{x}}<br>share that may attend: "
        "%{z:.3f}<extra></extra>",
        xgap=gaps[0],
        ygap=gaps[1],
        name=name,
    )


def _pooled(mask: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(B_q, B_k) float32: the share of each block of a (Q, K) mask that is True."""
    counts = np.add.reduceat(np.add.reduceat(mask.astype(np.int32), rows[:-1], 0), cols[:-1], 1)
    sizes = np.outer(np.diff(rows), np.diff(cols))
    return np.asarray(counts / sizes, dtype=np.float32)


def _spans(at: np.ndarray) -> list[str]:
    """Each block's positions, "0–31", as a category label."""
    return [f"{int(a)}–{int(b) - 1}" for a, b in itertools.pairwise(at)]


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
