"""Explore's every-head grid, drawn on a canvas in the browser (static/grid_canvas.js) from
viz.head_grid's compact payload (app/web/components.py). A click on a thumbnail sends its layer and
head back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attnlens.app.web.components import component, text_sizes
from attnlens.record.norms import Measure
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.head_grid import HeadGrid
from attnlens.viz.heads.overview_grid import every_head_grid

KEY = "head_grid"
EVENT = "picked"  # the trigger a click sets: {"layer": l, "head": h}
HTML = """<div class="hg-root">
<div class="hg-title"></div><div class="hg-note"></div>
<div class="hg-legend"><div>share (colour ∝ ∛share)</div><div class="hg-bar"></div>
<div class="hg-ticks"></div></div>
<div class="hg-stage"><canvas class="hg-canvas" aria-label="every head"></canvas>
<div class="hg-labels"></div>
<div class="hg-tip" hidden></div></div>
</div>"""

_mount = component("attnlens_head_grid", "grid_canvas", HTML)


def head_grid(data: dict[str, Any], present: bool, on_pick: Callable[[], None]) -> None:
    """The grid of viz.HeadGrid.data() payload `data`; on_pick runs when a thumbnail is
    clicked (picked_head() then says which)."""
    _mount(key=KEY, data={**data, **text_sizes(present)}, on_picked_change=on_pick)


def grid_payload(tr: Trace, kind: Kind, measure: Measure, both: bool = False) -> dict[str, Any]:
    """The grid's payload in `measure` (weights where the record cannot show the norms, its
    note saying why); both: with the other measure's cells beside it ("other"), so that a
    long input's head view switches the grid in the browser without sending it again."""
    grid, why = _grid(tr, kind, measure)
    data = grid.data()
    if why:
        data["note"] = " ".join(filter(None, [data["note"], f"Weights shown: {why}"]))
    other: Measure = "weight" if grid.measure == "norm" else "norm"
    if both:
        alternative, missing = _grid(tr, kind, other)
        if not missing:
            keep = ("cells", "title", "note", "measure", "cell_name")
            data["other"] = {k: v for k, v in alternative.data().items() if k in keep}
    return data


def _grid(tr: Trace, kind: Kind, measure: Measure) -> tuple[HeadGrid, str]:
    """The grid of one measure (from the record's overviews where it keeps them, else its
    weights), or the weights' and why the norms cannot be shown."""
    try:
        return every_head_grid(tr, kind, measure=measure), ""
    except ValueError as why:
        if measure == "weight":
            raise
        return _grid(tr, kind, "weight")[0], str(why)


def picked_head(n_layers: int, n_heads: int) -> tuple[int, int] | None:
    """(layer, head) of the thumbnail just clicked, read inside on_pick; None without one."""
    state = st.session_state.get(KEY)
    return head_of(state.get(EVENT) if isinstance(state, dict) else None, n_layers, n_heads)


def head_of(value: object, n_layers: int, n_heads: int) -> tuple[int, int] | None:
    """(layer, head) of a click's value {"layer": l, "head": h}; None for anything that is not
    a head of an n_layers × n_heads grid (the browser's word is checked, not trusted)."""
    if not isinstance(value, dict):
        return None
    layer, head = value.get("layer"), value.get("head")
    if type(layer) is not int or type(head) is not int:  # bool is an int, and not a head
        return None
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        return None
    return layer, head
