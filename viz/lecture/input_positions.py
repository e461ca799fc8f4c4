"""Embeddings and positional encoding (§3.4, §3.5) for the positions of this very input."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.trace import Trace
from attnlens.viz.shared.labels import position_labels
from attnlens.viz.shared.palette import MEASURE, SIGNED


def input_tokens(trace: Trace) -> tuple[str, ...]:
    """The tokens the first stack reads: the source, or the decoder's input on a decoder-only
    model."""
    return trace.shown("encoder_self")[0] if trace.src_tokens else trace.shown("decoder_self")[0]


def input_positions(trace: Trace, dims: int = 32) -> go.Figure:
    """Left: the positional encoding row added to each input token's embedding (the first
    `dims` dimensions); right: how alike the rows of any two positions are (cosine), which
    depends on how far apart they are, not on where."""
    pe = trace.positional_encoding
    if pe is None:
        scheme = trace.positional_scheme or "not stated"
        raise ValueError(
            f"{trace.model.name} adds no position table to its embeddings (its scheme: "
            f"{scheme}); positions enter inside attention instead"
        )
    tokens = input_tokens(trace)
    n = len(tokens)
    rows = np.asarray(pe[:n, :dims], np.float64)  # (n, dims)
    full = np.asarray(pe[:n], np.float64)  # (n, d_model)
    unit = full / np.maximum(np.linalg.norm(full, axis=1, keepdims=True), 1e-12)
    similar = unit @ unit.T  # (n, n)
    labels = position_labels(tokens)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.55, 0.45],
        horizontal_spacing=0.13,  # the table's colour bar, its projector-sized ticks too
        subplot_titles=(
            f"PE row added to each token (dimensions 0–{dims - 1} of {pe.shape[1]})",
            "cos(PE_i, PE_j): alike when close",
        ),
    )
    fig.add_trace(
        go.Heatmap(
            z=rows,
            x=[str(j) for j in range(rows.shape[1])],
            y=labels,
            colorscale=SIGNED,
            zmin=-1,
            zmax=1,
            xgap=1,
            ygap=1,
            colorbar={"title": "PE", "x": 0.5},
            name="PE",
            hovertemplate="%{y}<br>dimension %{x}<br>%{z:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            z=similar,
            x=labels,
            y=labels,
            colorscale=MEASURE,
            zmin=-1,
            zmax=1,
            xgap=1,
            ygap=1,
            name="similarity",
            showscale=False,
            hovertemplate="%{y}<br>%{x}<br>cos %{z:.3f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.update_xaxes(type="category", side="bottom")
    fig.update_yaxes(type="category", autorange="reversed")
    # both panels have this input's positions as rows: named once, left of the table (drawn
    # left of the likeness panel too, they lay over the table's colour bar, slide 3)
    fig.update_yaxes(showticklabels=False, matches="y", row=1, col=2)
    fig.update_layout(
        title=f"§3.5 on this input: embedding · √d_model + PE, d_model = {trace.model.d_model}",
        margin={"l": 10, "r": 10, "t": 110, "b": 10},
    )
    return fig
