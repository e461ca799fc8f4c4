"""Figures made clickable in Streamlit: its chart selection reports clicked points only, and
only when their customdata are plain lists.

The model view (viz.model_view) is one tiled heatmap, and heatmaps cannot be selected; its
invisible points on each thumbnail's centre can, and they sit at x = head, y = layer, so a
clicked point says which head by where it is. Any other figure's typed-array customdata
(which gives Streamlit no selection at all) becomes plain lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go


def clickable_heads(fig: go.Figure) -> go.Figure:
    """The model view, changed in place, with its thumbnails' names inviting a click."""
    fig.update_traces(
        hovertemplate="layer %{y} · head %{x}: click to enlarge<extra></extra>",
        selector={"type": "scatter", "name": "heads"},
    )
    return fig


def clicked_head(point: Mapping[str, Any], n_layers: int, n_heads: int) -> tuple[int, int] | None:
    """(layer, head) of a clicked model-view point, read off its position; None for a point
    that is not a thumbnail's centre (another trace, or outside the grid)."""
    try:
        layer, head = float(point["y"]), float(point["x"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (layer.is_integer() and head.is_integer()):
        return None
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        return None
    return int(layer), int(head)


def clickable(fig: go.Figure) -> go.Figure:
    """The figure with every trace's customdata as plain lists (a chart whose points carry
    typed-array customdata gives Streamlit no click selection at all)."""
    traces = [trace.to_plotly_json() for trace in fig.data]
    for spec in traces:
        if spec.get("customdata") is not None:
            spec["customdata"] = np.asarray(spec["customdata"]).tolist()
    return go.Figure(data=traces, layout=fig.layout)  # built from lists, so kept as lists
