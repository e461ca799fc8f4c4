"""Explore: type text, pick a kind, layer and head, and see where that head looks.

A new text reruns the text boxes and the figures only, not the page around them
(app/web/scaffold.py, traced_page).

The heatmap is what a keystroke waits for; the lines view and every head come after it, both
drawn by the browser on a canvas from a compact payload (app/web/components.py).
Streamlit sends each chart as soon as the script makes it, but a browser that receives several
charts at once draws them in one go, so the page pauses a moment after the heatmap (the
server's CPU is free meanwhile): the browser draws the heatmap before the others arrive.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import streamlit as st

from attnlens import viz
from attnlens.app.web import downloads, show
from attnlens.app.web.explore.grid_canvas import grid_payload, head_grid, picked_head
from attnlens.app.web.explore.lines_canvas import lines_canvas
from attnlens.app.web.explore.long_head import (
    held_head,
    held_measure,
    is_long,
    long_head,
    measure_picker,
    scale_picker,
)
from attnlens.app.web.explore.next_tokens import predictions
from attnlens.app.web.explore.pairs import pair_view
from attnlens.app.web.explore.token_sets import token_sets
from attnlens.app.web.pickers import kind_picker, layer_head_pickers, memo
from attnlens.app.web.safe_text import md
from attnlens.app.web.scaffold import Started, traced_page, true_alignment
from attnlens.record.norms import Measure
from attnlens.record.trace import Kind, Trace
from attnlens.viz.shared.margins import BASE_FONT
from attnlens.viz.shared.style import PROJECTOR_FONT

WIDE_FROM = 64  # positions past which the heatmap takes the full width (cells stay ≥ 1 px)


def page() -> None:
    traced_page("explore", "Explore", traced_view, caption=True, record="auto")


def traced_view(started: Started) -> None:
    lens, tr = started.lens, started.trace
    # under the text box: on a projector it is in the sidebar (the page reruns whole there)
    (st.sidebar if show.presenting() else st).caption(md(token_count(tr, lens.max_tokens)))
    output = lens.text_of(tr.tgt_tokens[1:])
    if started.target is None and lens.capabilities.takes_target:
        st.text("Output: " + output)
    slot = st.container()  # a decoder-only model's continuation, filled after the heatmap
    head_view(tr, true_alignment(started))
    predictions(started, slot)


def token_count(tr: Trace, limit: int) -> str:
    """How many tokens the text is, against the model's limit."""
    n = len(tr.input_tokens)
    return f"{n:,} tokens of the {limit:,} this model reads"


def _enlarge_clicked(n_layers: int, n_heads: int) -> None:
    """A click on a thumbnail of the every-head grid picks that layer and head."""
    picked = picked_head(n_layers, n_heads)
    if picked is not None:
        st.session_state["w_layer"], st.session_state["w_head"] = picked


@st.fragment
def head_view(tr: Trace, alignment: tuple[int, ...] | None = None) -> None:
    """Re-runs alone when a control inside it moves; the model is not run again. alignment:
    the true source of each output token, circled on cross-attention when known."""
    present = show.presenting()
    first = st.container() if present else None  # on a projector the figure comes first
    row = st.container(horizontal=True)  # one block, not four (st.columns): fewer messages
    kind = kind_picker(tr, row)  # before the heatmap, each one the browser renders on its own
    if is_long(tr, kind):
        scale = scale_picker(row)
        long_head(tr, kind, scale, present)
        measure = held_measure(tr, kind)
        every_head(tr, kind, *held_head(tr, kind), measure, both=True)
        token_sets(tr, kind, scale, measure)
        return
    layer, head = layer_head_pickers(*tr.model.shape(kind), (row, row))
    scale = scale_picker(row)
    measure = measure_picker(row, tr, kind)
    if first is not None or max(map(len, tr.tokens(kind))) > WIDE_FROM:
        left, right = first or st.container(), st.container()  # each figure the full width
    else:
        left, right = st.columns([3, 2])
    with left:
        circled = alignment if kind == "cross" else None
        show.figure(
            viz.head_heatmap(tr, kind, layer, head, circled, scale, measure),
            "heatmap",
            f"{kind}-layer{layer}-head{head}" + ("-norm" if measure == "norm" else ""),
        )
        if circled is not None:
            st.caption("○ the true source of each output token, known from the task")
    show.let_it_draw()  # the heatmap leaves alone and is drawn first (module docstring)
    with right:
        lines_view(tr, kind, layer, head, present)
        if measure == "norm":  # the lines are weights whatever the measure: said beside them
            st.caption("The lines show the weights αᵢⱼ; Measure colours the heatmap and heads.")
    if tr.src_segments is not None and kind == "encoder_self":
        pair_view(tr, layer, head)
    every_head(tr, kind, layer, head, measure)
    token_sets(tr, kind, scale, measure)


def lines_view(tr: Trace, kind: Kind, layer: int, head: int, present: bool) -> None:
    """The head's lines, drawn by the browser; their Plotly figure is what the buttons download,
    built only when one is clicked (building it took about a fifth of a keystroke's CPU)."""
    text_px = PROJECTOR_FONT if present else BASE_FONT
    data = viz.lines_data(tr, kind, layer, head, text_px=text_px)
    lines_canvas(data.data(), present)
    show.figure_downloads(
        lambda: show.styled(viz.lines_view(tr, kind, layer, [head], text_px=text_px), present),
        data.figure_bound(), "lines", f"{kind}-layer{layer}-head{head}-lines",
    )  # fmt: skip


def every_head(
    tr: Trace, kind: Kind, layer: int, head: int, measure: Measure = "weight", both: bool = False
) -> None:
    """Every head, after the heatmap and the lines, the enlarged one outlined, in the measure
    shown. Its cells depend on the trace, the kind and the measure only: another head picked
    re-sends them unchanged with another outline, and the browser redraws from the cells it has
    decoded (app/head_grid.js). On a long input they come from the record's overviews
    (viz/heads/overview_grid.py), with both measures' cells (both), and another head or measure
    picked does not send them again (long_head.py): the browser moves the outline or switches."""
    st.subheader(f"Every head (layer {layer} · head {head} is enlarged above; click one)")
    cells = memo(
        "head_grid", (tr, kind, measure, both), lambda: grid_payload(tr, kind, measure, both)
    )
    head_grid(
        {**cells, "selected": [layer, head], "kind": kind},
        show.presenting(),
        partial(_enlarge_clicked, *tr.model.shape(kind)),
    )
    record_downloads(tr, kind, layer, head)


def record_downloads(tr: Trace, kind: Kind, layer: int, head: int) -> None:
    """The record as JSON and as NPZ (its arrays as they are: on minilm at 510 tokens the
    JSON is too large to send, the NPZ is not), and as a CSV table of the head shown (or, when
    asked, of every kind, layer and head: on minilm at 510 tokens 18.7 M rows, about 900 MB)."""
    cols = st.columns(2)
    with cols[0], st.container(horizontal=True):
        show.record(
            tr, "trace_json", "trace", "Download record (JSON)",
            instead="Download the record as NPZ, or write its JSON with attnlens trace … --out.",
        )  # fmt: skip
        downloads.button(
            "Download record (NPZ)", tr.write_npz, memo("trace_npz_bound", tr, tr.npz_bound),
            "trace.npz",
            "application/zip", "trace_npz",
            help="every array as it is, read back with attnlens.Trace.from_npz",
        )  # fmt: skip
    with cols[1]:
        every = st.toggle("Table of every kind, layer and head", key="w_csv_all")
        chosen: dict[str, Any] = {} if every else {"kind": kind, "layer": layer, "head": head}
        name = "trace" if every else downloads.figure_name(kind, layer, head, "trace")
        downloads.button(
            "Download table (CSV)", downloads.text_writer(lambda: tr.csv_chunks(**chosen)),
            tr.csv_bound(**chosen), f"{name}.csv", "text/csv", "trace_csv",
            help=None if every else f"{kind} attention of layer {layer}, head {head}",
        )  # fmt: skip


page()
