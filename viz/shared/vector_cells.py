"""A figure's heatmap cells as vector shapes, for its SVG.

Plotly draws a heatmap as one picture, so its SVG held the cells as an embedded PNG (issue 49):
blurred when enlarged, not editable in a drawing program. Here each heatmap's cells become
filled paths under it, one path for each of LEVELS shades of its colour scale, a row's run of
cells of one shade one rectangle; the heatmap itself stays, its picture transparent, for its
colour bar, the numbers written in its cells (their ink still chosen against each cell's
colour) and its hover. Up to VECTOR_CELLS cells a figure (docs/app.md, Downloads): past that the
SVG would take kaleido minutes and tens of MB, and the PNG is the file to take.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import convert_colors_to_same_type, get_colorscale

VECTOR_CELLS = 16_384  # a 128 × 128 heatmap (the overview's size), or several smaller ones
LEVELS = 64  # shades of a colour scale: one step is 1/64 of its range
SEAM_PX = 0.5  # each path also stroked in its own colour: no hairline between two cells


def heatmap_cells(fig: go.Figure) -> int:
    """How many cells the figure's heatmaps hold together."""
    return sum(
        int(np.asarray(t.z, dtype=object).size)
        for t in fig.data
        if t.type == "heatmap" and t.z is not None
    )


def vector_cells(fig: go.Figure) -> go.Figure:
    """A copy of the figure whose heatmaps' cells are vector paths (see the module's text);
    a heatmap whose colours cannot be resolved keeps its picture."""
    out = go.Figure(fig)
    shapes: list[dict[str, Any]] = []
    for trace in out.data:
        if trace.type != "heatmap" or trace.z is None:
            continue
        drawn = _cell_paths(out, trace)
        if drawn:
            shapes += drawn
            trace.opacity = 0  # the picture goes; its text and colour bar stay
            for axis in (_axis(trace.xaxis, "xaxis"), _axis(trace.yaxis, "yaxis")):
                # a grid is drawn over shapes below the traces, where the picture hid it
                out.layout[axis].update(showgrid=False, zeroline=False)
    out.update_layout(shapes=[*shapes, *(out.layout.shapes or ())])
    return out


def _axis(ref: str | None, name: str) -> str:
    """The layout's name of a trace's axis: "x2" → "xaxis2", None → "xaxis"."""
    return name + (ref or "")[1:]


def _cell_paths(fig: go.Figure, trace: Any) -> list[dict[str, Any]]:
    """One filled path per shade for a heatmap's cells; [] when its colours are unknown."""
    scale, low, high = _colours(fig, trace)
    if scale is None:
        return []
    z = np.array(trace.z, dtype=float)  # (rows, columns), NaN where nothing is drawn
    if z.ndim != 2:
        return []
    span = (high - low) or 1.0
    level = np.clip(((z - low) / span * LEVELS).astype(int, copy=False), 0, LEVELS - 1)
    level = np.where(np.isfinite(z), level, -1)
    xs, ys = _edges(trace.x, z.shape[1]), _edges(trace.y, z.shape[0])
    shades = shades_of(scale, LEVELS)
    if trace.reversescale:
        shades = shades[::-1]
    out = []
    for k in np.unique(level[level >= 0]):
        path = "".join(_runs(level == k, xs, ys))
        colour = shades[int(k)]
        out.append({
            "type": "path", "path": path, "xref": trace.xaxis or "x", "yref": trace.yaxis or "y",
            "fillcolor": colour, "line": {"color": colour, "width": SEAM_PX}, "layer": "below",
        })  # fmt: skip
    return out


def shades_of(scale: list[list[Any]], levels: int) -> list[str]:
    """`levels` colours of a colour scale, each the middle of its step, as 'rgb(r,g,b)'
    (between two stops the colour is interpolated linearly, as Plotly does; a stop given
    twice makes a sharp edge)."""
    stops = np.array([float(v) for v, _ in scale])
    colours = np.array(convert_colors_to_same_type([c for _, c in scale], "tuple")[0]) * 255
    at = (np.arange(levels) + 0.5) / levels
    rgb = [np.interp(at, stops, colours[:, channel]) for channel in range(3)]
    return [f"rgb({r:.0f},{g:.0f},{b:.0f})" for r, g, b in zip(*rgb, strict=True)]


def _runs(cells: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> list[str]:
    """Each row's runs of True cells as rectangles, in axis coordinates."""
    out = []
    for i, row in enumerate(cells):
        padded = np.concatenate([[False], row, [False]])
        change = np.flatnonzero(padded[1:] != padded[:-1])  # starts and ends, in turn
        for a, b in zip(change[::2], change[1::2], strict=True):
            x0, x1, y0, y1 = xs[a], xs[b], ys[i], ys[i + 1]
            out.append(f"M{x0:.6g},{y0:.6g}H{x1:.6g}V{y1:.6g}H{x0:.6g}Z")
    return out


def _edges(values: Any, n: int) -> np.ndarray:
    """(n + 1,) cell edges along an axis: categories and no values are indices 0, 1, …;
    numbers are the cells' centres, or their edges when there is one more."""
    if values is None or len(values) == 0:
        return np.arange(n + 1) - 0.5
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":  # category names: a category axis counts from 0
        return np.arange(n + 1) - 0.5
    at = array.astype(float)
    if at.size == n + 1:
        return at
    if at.size == 1:
        return np.array([at[0] - 0.5, at[0] + 0.5])
    mid = (at[1:] + at[:-1]) / 2
    return np.concatenate([[at[0] - (mid[0] - at[0])], mid, [at[-1] + (at[-1] - mid[-1])]])


def _colours(fig: go.Figure, trace: Any) -> tuple[Any, float, float]:
    """The trace's colour scale and the values at its ends (from its colour axis when it
    has one, else its own zmin / zmax, else its data's range)."""
    if trace.coloraxis:
        axis = fig.layout[trace.coloraxis]
        scale, low, high = axis.colorscale, axis.cmin, axis.cmax
    else:
        scale, low, high = trace.colorscale, trace.zmin, trace.zmax
    if scale is None:
        return None, 0.0, 1.0
    if isinstance(scale, str):
        scale = get_colorscale(scale)
    z = np.array(trace.z, dtype=float)
    finite = z[np.isfinite(z)]
    low = float(low) if low is not None else float(finite.min()) if finite.size else 0.0
    high = float(high) if high is not None else float(finite.max()) if finite.size else 1.0
    return [list(pair) for pair in scale], low, high
