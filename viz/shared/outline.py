"""The red box that marks one query's row on a heatmap (the row a figure is about)."""

from __future__ import annotations

import plotly.graph_objects as go

from attnlens.viz.shared.palette import RED

ROW_COLOUR = RED


def outline_row(fig: go.Figure, row: int, width: int, col: int) -> None:
    """Outline query row `row` of the heatmap `width` keys wide in subplot (1, col) of fig."""
    fig.add_shape(
        type="rect",
        x0=-0.5,
        x1=width - 0.5,
        y0=row - 0.5,
        y1=row + 0.5,
        line={"color": ROW_COLOUR, "width": 3},
        row=1,
        col=col,
    )
