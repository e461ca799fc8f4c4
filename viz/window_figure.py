"""A head's window (viz/head_window.py) as a Plotly figure: what Explore's zoomable view of a
long input downloads, and what a notebook shows, drawn by the same colour rule."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlens.viz.colour_scale import (
    HOVER_DIGITS,
    Scale,
    check_scale,
    colorbar,
    colorscale,
    colour_position,
)
from attnlens.viz.head_window import HeadWindow
from attnlens.viz.heatmap import grid_title, masked_layer

HEIGHT = 760


def window_figure(window: HeadWindow, scale: Scale = "perceptual") -> go.Figure:
    """Queries down, keys across, on position axes (a block spans its positions); masked
    blocks grey; the hover gives the weight (or the block's max or mean) to fixed digits."""
    check_scale(scale)
    x = (window.col_edges - 0.5).astype(float)  # cell edges: block b spans its positions
    y = (window.row_edges - 0.5).astype(float)
    what = "weight" if window.exact else f"{window.pooling} weight"
    cells = go.Heatmap(
        z=colour_position(window.values, scale),
        customdata=window.values,
        x=x,
        y=y,
        zmin=0.0,
        zmax=1.0,
        colorscale=colorscale(),
        colorbar=colorbar(scale),
        hovertemplate=(
            f"query %{{y:.0f}}<br>key %{{x:.0f}}<br>{what} "
            f"%{{customdata:.{HOVER_DIGITS}f}}<extra></extra>"
        ),
        hoverongaps=False,
        name=what,
    )
    masked = np.isnan(window.values)
    layers = [cells]
    if masked.any():
        grey = masked_layer(~masked, list(x), list(y))
        layers.append(grey.update(x=x, y=y, hovertemplate="masked: not allowed<extra></extra>"))
    heading, top = grid_title(window.title, window.caption())
    layout = {
        "title": heading,
        "xaxis": {"title": {"text": "key position"}, "side": "bottom", "automargin": True},
        "yaxis": {"title": {"text": "query position"}, "autorange": "reversed", "automargin": True},
        "height": HEIGHT,
        "margin": {"t": top, "l": 70, "r": 20, "b": 60},
    }
    return go.Figure(layers, layout=layout)
