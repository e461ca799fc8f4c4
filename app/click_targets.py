"""Figures made clickable in Streamlit: its chart selection reports clicked points only, and
only when their customdata are plain lists.

Plotly heatmaps cannot be selected, so each model-view thumbnail gets a sparse grid of
invisible points that carry [layer, head]; and any figure's typed-array customdata (which
gives Streamlit no selection at all) becomes plain lists."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

GRID = 6  # points per thumbnail side: close enough together that any click lands near one
HOVER_DISTANCE = 100  # pixels from the pointer within which a point answers a hover or click


def clickable_thumbnails(fig: go.Figure, grid: int = GRID) -> go.Figure:
    """Add to a model view (viz.model_view), in place, invisible points over every thumbnail
    whose customdata is [layer, head] (plain lists: Streamlit drops typed-array customdata
    from selections), so a click on a thumbnail can say which head it is.

    At most grid × grid points per thumbnail keep the figure small at any length. The points
    take over hovering (a heatmap under the pointer would win it otherwise), and a wide hover
    distance lets a click anywhere on a thumbnail reach its nearest point; the exact weights
    are in the enlarged heatmap.
    """
    thumbs = [t for t in fig.data if isinstance(t, go.Heatmap) and t.meta is not None]
    for thumb in thumbs:
        layer, head = (int(v) for v in thumb.meta)
        xs, ys = _spread(len(thumb.x), grid), _spread(len(thumb.y), grid)
        cols, rows = np.meshgrid(xs, ys)  # (grid_y, grid_x) each
        x_labels = np.asarray(thumb.x, dtype=object)[cols.ravel()]
        y_labels = np.asarray(thumb.y, dtype=object)[rows.ravel()]
        fig.add_trace(
            go.Scatter(
                x=x_labels.tolist(),
                y=y_labels.tolist(),
                xaxis=thumb.xaxis,
                yaxis=thumb.yaxis,
                mode="markers",
                marker={"size": 18, "opacity": 0.0},
                customdata=[[layer, head]] * x_labels.size,
                hovertemplate=f"layer {layer} · head {head}: click to enlarge<extra></extra>",
                showlegend=False,
            )
        )
        thumb.hoverinfo = "skip"
    fig.update_layout(hovermode="closest", hoverdistance=HOVER_DISTANCE)
    return fig


def _spread(n: int, k: int) -> np.ndarray:
    """At most k indices spread evenly over 0..n-1, ends included."""
    return np.unique(np.linspace(0, n - 1, min(n, k)).round().astype(int))


def clickable(fig: go.Figure) -> go.Figure:
    """The figure with every trace's customdata as plain lists (a chart whose points carry
    typed-array customdata gives Streamlit no click selection at all)."""
    traces = [trace.to_plotly_json() for trace in fig.data]
    for spec in traces:
        if spec.get("customdata") is not None:
            spec["customdata"] = np.asarray(spec["customdata"]).tolist()
    return go.Figure(data=traces, layout=fig.layout)  # built from lists, so kept as lists
