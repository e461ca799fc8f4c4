"""A head's window (viz/heads/head_window.py) as a Plotly figure: what Explore's zoomable view of a
long input downloads, and what a notebook shows, drawn by the same colour rule."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlens.viz.heads.colour_scale import (
    HOVER_DIGITS,
    Scale,
    check_scale,
    colorbar,
    colorscale,
    colour_position,
    measure_title,
)
from attnlens.viz.heads.head_marks import HeadMarks
from attnlens.viz.heads.head_window import HeadWindow
from attnlens.viz.heads.heatmap import grid_title, masked_layer
from attnlens.viz.shared.labels import MAX_TICKS, escape
from attnlens.viz.shared.palette import ORANGE, RED

HEIGHT = 760
BAND = ORANGE  # the sliding window's edges
SINK = RED  # the outline of a sink's key column


def window_figure(
    window: HeadWindow, scale: Scale = "perceptual", marks: HeadMarks | None = None
) -> go.Figure:
    """Queries down, keys across, on position axes (a block spans its positions); masked
    blocks grey; the hover gives the weight (or the block's max or mean) to fixed digits.
    marks: the head's sliding-window edges drawn as lines, a sink's key column outlined and
    both named, with the position scheme, under the title."""
    check_scale(scale)
    x = (window.col_edges - 0.5).astype(float)  # cell edges: block b spans its positions
    y = (window.row_edges - 0.5).astype(float)
    what = window.quantity if window.exact else f"{window.pooling} {window.quantity}"
    bar = colorbar(scale)
    if window.measure == "norm":  # a share of the window's largest (norms exceed 1)
        bar["title"] = {"text": measure_title(scale, window.unit)}
    cells = go.Heatmap(
        z=colour_position(window.values / window.unit, scale),
        customdata=window.values,
        x=x,
        y=y,
        zmin=0.0,
        zmax=1.0,
        colorscale=colorscale(),
        colorbar=bar,
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
    caption = window.caption()
    if marks is not None and marks.caption():
        caption += "<br>" + marks.caption()
    heading, top = grid_title(window.title, caption)
    rows, cols = window.row_edges[:-1], window.col_edges[:-1]
    layout = {
        "title": heading,
        "xaxis": {
            "title": {"text": "key position"},
            "side": "bottom",
            "automargin": True,
            **token_ticks(cols, window.key_labels),
        },
        "yaxis": {
            "title": {"text": "query position"},
            "autorange": "reversed",
            "automargin": True,
            **token_ticks(rows, window.query_labels),
        },
        "height": HEIGHT,
        "margin": {"t": top, "l": 70, "r": 20, "b": 60},
        "shapes": [] if marks is None else mark_shapes(window, marks),
    }
    return go.Figure(layers, layout=layout)


def token_ticks(positions: np.ndarray, labels: tuple[str, ...]) -> dict[str, object]:
    """An exact window's axis labelled as the screen labels it, each tick its position and
    token ("576 · w803"), every k-th where they would not fit (MAX_TICKS at most); a pooled
    window keeps Plotly's own position numbers."""
    if not labels:
        return {}
    step = max(1, -(-len(labels) // MAX_TICKS))
    return {
        "tickmode": "array",
        "tickvals": [float(p) for p in positions[::step]],
        "ticktext": [escape(label) for label in labels[::step]],
    }


def mark_shapes(window: HeadWindow, marks: HeadMarks) -> list[dict[str, object]]:
    """The window's band edges as lines and a sink's first key block outlined, in positions."""
    shapes: list[dict[str, object]] = [
        {"type": "line", "x0": j0, "y0": i0, "x1": j1, "y1": i1,
         "line": {"color": BAND, "width": 1.5, "dash": "dash"}}
        for j0, i0, j1, i1 in marks.lines(window.rows, window.cols)
    ]  # fmt: skip
    if marks.sink and window.cols[0] == 0:
        shapes.append(
            {"type": "rect", "x0": -0.5, "x1": float(window.col_edges[1]) - 0.5,
             "y0": window.rows[0] - 0.5, "y1": window.rows[1] - 0.5,
             "line": {"color": SINK, "width": 2}}
        )  # fmt: skip
    return shapes
