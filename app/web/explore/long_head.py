"""Explore's head at any length: past EXACT_SIDE positions a side the enlarged head is its
pooled overview (the record's own, computed at trace time), a box dragged on it fetches that
window of the one head shown, exact cell by cell once it is at most EXACT_SIDE a side, and
"Whole head" goes back out (docs/app.md, Explore).

The layer and head pickers and the view are a fragment of their own inside the page's: another
head picked, or a zoom, sends that one head's window (a 128 × 128 overview is ~45 KB), never
the every-head grid or the record again. The grid's outline follows in the browser."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from attnlens.app.web import show
from attnlens.app.web.downloads import figure_name
from attnlens.app.web.explore.head_zoom import RESET, head_zoom, zoom_asked
from attnlens.app.web.explore.lines_canvas import lines_canvas
from attnlens.app.web.pickers import layer_head_pickers, measure_radio, memo
from attnlens.app.web.safe_text import md
from attnlens.model.lenses.head_pooling import kept_as_scores, norm_blocks
from attnlens.record.norms import Measure
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.colour_scale import Scale
from attnlens.viz.heads.head_marks import HeadMarks, head_marks
from attnlens.viz.heads.head_window import (
    EXACT_SIDE,
    HeadWindow,
    Pooling,
    Span,
    head_window,
    pooled,
)
from attnlens.viz.heads.window_figure import window_figure
from attnlens.viz.lines.lines_range import RANGE_QUERIES, default_start, lines_range
from attnlens.viz.shared.margins import BASE_FONT
from attnlens.viz.shared.style import PROJECTOR_FONT

ZOOM = "_zoom"  # the window shown: ((trace id, kind), rows, cols) while zoomed in
FIGURE_CELL_BYTES = 48  # a cell's JSON in the downloaded figure, at most (z, customdata, comma)

# the head a token set's outline and profile were drawn for (token_sets.py), and whether a page
# rerun that will redraw them for another head is under way (follow_set)
DRAWN_FOR, FOLLOWING = "_token_set_head", "_token_set_following"


def is_long(tr: Trace, kind: Kind) -> bool:
    """Whether one kind's map is longer than EXACT_SIDE a side: shown as an overview."""
    return max(map(len, tr.tokens(kind))) > EXACT_SIDE


def scale_picker(where: st.delta_generator.DeltaGenerator) -> Scale:
    """The colour rule of the enlarged head: perceptual (colour ∝ ∛weight) unless asked."""
    linear = where.toggle(
        "Linear colour", key="w_linear",
        help="colour ∝ weight; off: colour ∝ ∛weight, so small weights of a long input show",
    )  # fmt: skip
    return "linear" if linear else "perceptual"


def measure_picker(where: st.delta_generator.DeltaGenerator, tr: Trace, kind: Kind) -> Measure:
    """What the enlarged head shows (pickers.measure_radio), where the record holds norms."""
    held = tr.norms is not None and kind in tr.norms
    return measure_radio(where, held, tr.norms_missing)


def held_measure(tr: Trace, kind: Kind) -> Measure:
    """The measure the picker holds, where the record can show it (else the weight)."""
    picked = st.session_state.get("w_measure")
    held = tr.norms is not None and kind in tr.norms
    return "norm" if held and picked == "norm" else "weight"


def pool_head(
    tr: Trace,
    kind: Kind,
    layer: int,
    head: int,
    row_e: np.ndarray,
    col_e: np.ndarray,
    pooling: Pooling,
    measure: Measure,
) -> np.ndarray:
    """head_window's pooler, for what the record does not keep (the whole head's overviews,
    both measures, it does): the norm measure of a record of scores, a zoomed window or an
    older record's block max, pooled for that one head by the trace-time code
    (model/lenses/head_pooling.py), both poolings kept for the session until another head or
    window is shown; anything else as head_window pools it."""
    if measure != "norm" or not kept_as_scores(tr, kind):
        return pooled(tr, kind, layer, head, row_e, col_e, pooling, measure)
    window = (int(row_e[0]), int(row_e[-1]), int(col_e[0]), int(col_e[-1]), len(row_e))
    most, mean = memo(
        "norm_blocks", (tr, kind, layer, head, window),
        lambda: norm_blocks(tr, kind, layer, head, row_e, col_e),
    )  # fmt: skip
    return most if pooling == "max" else mean


def held_head(tr: Trace, kind: Kind) -> tuple[int, int]:
    """The layer and head the pickers hold for this kind (their defaults where they hold none
    that fits)."""
    n_layers, n_heads = tr.model.shape(kind)
    layer, head = st.session_state.get("w_layer"), st.session_state.get("w_head")
    layer = layer if isinstance(layer, int) and 0 <= layer < n_layers else n_layers - 1
    return layer, head if isinstance(head, int) and 0 <= head < n_heads else 0


def held_window(tr: Trace, kind: Kind) -> tuple[Span | None, Span | None]:
    """The zoomed window of this trace and kind; (None, None): the whole head."""
    held = st.session_state.get(ZOOM)
    if held is None or held[0] != (id(tr), kind):
        return None, None
    return held[1], held[2]


def _zoomed(shown: tuple[int, Kind], size: tuple[int, int]) -> None:
    """A box dragged on the head (or "Whole head"): the window the next run shows. shown: the
    trace's id and the kind, never the trace: Streamlit keeps a widget's callback in the
    session's state, which outlives a closed tab until its reconnection expires, and a trace
    held there stays in memory (75 MB at 510 tokens on MiniLM) when every tab has closed."""
    asked = zoom_asked(size)
    if asked == RESET:
        st.session_state.pop(ZOOM, None)
    elif isinstance(asked, tuple):
        st.session_state[ZOOM] = (shown, *asked)


@st.fragment
def long_head(tr: Trace, kind: Kind, scale: Scale, present: bool) -> None:
    """The layer and head pickers, block max or mean, and the head's window, alone in a rerun."""
    place = st.container() if present else None  # on a projector the figure comes first
    row = st.container(horizontal=True)
    layer, head = layer_head_pickers(*tr.model.shape(kind), (row, row))
    measure = measure_picker(row, tr, kind)
    follow_set(layer, head, measure)
    mean = row.toggle(
        "Block mean", key="w_pool_mean",
        help="a pooled cell shows its block's mean; off: its largest",
    )  # fmt: skip
    rows, cols = held_window(tr, kind)
    pooling: Pooling = "mean" if mean else "max"
    window = head_window(
        tr, kind, layer, head, rows, cols, pooling, measure=measure, pooler=pool_head
    )
    marks = head_marks(tr, kind, layer, head)
    with place or st.container():
        payload = {**window.data(scale), **marks.data(window.rows, window.cols)}
        payload |= {"kind": kind, "selected": [layer, head]}
        head_zoom(payload, present, partial(_zoomed, (id(tr), kind), window.size))
    name = figure_name(kind, layer, head) + ("-norm" if measure == "norm" else "")
    _downloads(window, scale, marks, present, name)
    range_lines(tr, kind, layer, head, present, None if window.whole else window.rows)


def follow_set(layer: int, head: int, measure: Measure = "weight") -> None:
    """A head or measure picked here while a token set is shown: the page reruns once so the
    set's outline, profile and measure (token_sets.py, outside this fragment) follow; without
    a set, the switch stays this fragment's alone (one head sent; the every-head grid holds
    both measures and follows in the browser)."""
    drawn = st.session_state.get(DRAWN_FOR)
    if not st.session_state.get("w_set_text") or drawn in (None, (layer, head, measure)):
        return
    if not st.session_state.get(FOLLOWING):
        st.session_state[FOLLOWING] = True
        st.rerun(scope="app")


def range_lines(
    tr: Trace, kind: Kind, layer: int, head: int, present: bool, zoomed: Span | None = None
) -> None:
    """The lines view of up to RANGE_QUERIES queries, each to its heaviest keys, exact from
    the record: the rows of the zoomed window where it holds at most RANGE_QUERIES, else from
    a first query the user picks (the last ones until then)."""
    n = len(tr.tokens(kind)[0])
    if zoomed is not None and zoomed[1] - zoomed[0] <= RANGE_QUERIES:
        start, count, which = zoomed[0], zoomed[1] - zoomed[0], "the zoomed window's queries"
    else:
        start = _first_query(n)
        count, which = RANGE_QUERIES, f"queries {start}–{min(n, start + RANGE_QUERIES) - 1}"
    text_px = PROJECTOR_FONT if present else BASE_FONT
    data = lines_range(tr, kind, layer, head, start, count, text_px=text_px)
    lines_canvas(data.data(), present)
    st.caption(
        md(
            f"Lines of {which} (of {n}): each query's heaviest keys are drawn (the title says "
            "how many), so a long input stays light. Zoom into the head above to read every "
            "weight of a window."
        )
    )


def _first_query(n: int) -> int:
    """The first query of the lines view, as the user picks it (the last ones until then)."""
    picked = st.number_input(
        f"Lines view: the {RANGE_QUERIES} queries from position", min_value=0,
        max_value=n - 1, value=default_start(n), step=16, key=f"w_lines_from_{n}",
        help=f"the lines of up to {RANGE_QUERIES} queries in a row (positions 0–{n - 1}); "
        "zoomed in, the lines follow the window's queries",
    )  # fmt: skip
    return int(picked)


def _downloads(
    window: HeadWindow, scale: Scale, marks: HeadMarks, present: bool, name: str
) -> None:
    """The window shown, as a Plotly figure, built only when a button is clicked."""
    bound = window.values.size * FIGURE_CELL_BYTES + 64 * 1024
    show.figure_downloads(
        lambda: show.styled(window_figure(window, scale, marks), present), bound, "heatmap",
        name, cells=window.values.size,
    )  # fmt: skip
