"""Where a figure's token labels fall among its panels: Plotly draws a y axis's tick labels
beside its own panel (left unless the axis says right), so labels of a panel with a neighbour
on that side sit in the gap and over the neighbour (the lecture's heads, padding and embedding
slides did). Read from the figure's layout, as the browser will draw it."""

from __future__ import annotations

from typing import Any


def _x_of(fig: Any, yaxis: Any) -> Any:
    """The x axis of the panel this y axis belongs to."""
    name = yaxis.anchor if yaxis.anchor not in (None, "free") else "x"
    return fig.layout[name.replace("x", "xaxis", 1)]


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _values(y: Any) -> list[Any]:
    return [] if y is None else list(y)


def _token_axis(fig: Any, axis: Any) -> bool:
    """A category axis, or one whose traces place text (tokens, names) along it."""
    if axis.type in ("category", "multicategory"):
        return True
    if axis.type not in (None, "-"):
        return False
    name = axis.plotly_name.replace("axis", "")
    values = [v for t in fig.data if (getattr(t, "yaxis", None) or "y") == name
              for v in _values(getattr(t, "y", None))]  # fmt: skip
    return any(isinstance(v, str) for v in values)


def labels_over_neighbours(fig: Any) -> list[str]:
    """Every category y axis whose labels are drawn on a side where another panel of the same
    row lies (empty: every panel's labels face the figure's margin)."""
    panels = [(tuple(x.domain or (0, 1)), tuple(y.domain or (0, 1)), y) for y in fig.select_yaxes()
              for x in [_x_of(fig, y)]]  # fmt: skip
    found = []
    for xs, ys, axis in panels:
        labelled = axis.showticklabels is not False and axis.visible is not False
        if not labelled or not _token_axis(fig, axis):
            continue
        row = [other for other, oys, o in panels if o is not axis and _overlap(ys, oys)]
        if axis.side == "right":
            beyond = [o for o in row if o[0] >= xs[1]]
        else:
            beyond = [o for o in row if o[1] <= xs[0]]
        if beyond:
            found.append(f"{axis.plotly_name} ({axis.side or 'left'}) faces a panel at {beyond[0]}")
    return found
