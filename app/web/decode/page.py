"""Decode: watch greedy, beam search or sampling step by step, and ask what-if.

The three views are tabs of which only the open one is drawn (and computed): every rerun makes
the browser render the page's whole element tree again, about 0.8 ms an element, so with the
comparison and what-if drawn below it, the step slider waited for some 70 elements; the
comparison's three decodings are made only when it is opened.
"""

from __future__ import annotations

import contextlib
from typing import Any

import streamlit as st

from attnlens import Lens, viz
from attnlens.app.web import show, urlstate
from attnlens.app.web.answers import right_answer
from attnlens.app.web.click_targets import clickable
from attnlens.app.web.decode.controls import (
    VIEWS,
    decoded,
    made_run,
    measure_picker,
    settings,
    what_if,
)
from attnlens.app.web.decode.step_view import step_view as show_steps
from attnlens.app.web.decode.step_view import stepped
from attnlens.app.web.decode.wrote import wrote_view
from attnlens.app.web.downloads import figure_name
from attnlens.app.web.pickers import layer_head_pickers, text_input
from attnlens.app.web.safe_text import md, md_items
from attnlens.app.web.scaffold import page_start
from attnlens.record.decode import DecodeRun
from attnlens.viz.decoding import decode_step as steps_viz
from attnlens.viz.decoding.beam import (
    Node,
    check_node,
    extended,
    followed,
    followed_row,
    output_node,
    steps_that_fit,
)
from attnlens.viz.shared.margins import BASE_FONT
from attnlens.viz.shared.style import PROJECTOR_FONT


def page() -> None:
    top = st.sidebar.container()  # on a projector the text and settings go first in the sidebar
    lens = page_start("decode", "Decode")
    if lens is None:
        return
    if not lens.capabilities.decodes:
        st.info(md(
            f"{lens.info.name} is an encoder-only model: it reads a text but writes none, so "
            "there is nothing to decode. Its attention is on Explore, Inside the Transformer, "
            "Heads and Experiments; pick an encoder-decoder or decoder-only model in the "
            "sidebar to decode."
        ))  # fmt: skip
        return
    present = show.presenting()
    with top if present else st.container():  # on a projector: the step's figures first
        text = text_input(lens)
        kwargs = settings(lens, text, stacked=present)
    place = st.empty()  # the run's page; while a new run is made, what runs (waits.py)
    with contextlib.suppress(ValueError):  # its message is drawn in the slot
        made_run(lens, text, "decode", place, **kwargs)
    with place.container():
        decoded_view(lens, text, kwargs, present)


def decoded_view(lens: Lens, text: str, kwargs: dict[str, Any], present: bool) -> None:
    """The run of these settings (made already), its output, record and tabs."""
    run = decoded(lens, text, "decode", **kwargs)
    if run is None:
        return
    if run.warnings:
        st.warning(md_items(run.warnings))
    st.text(f"Output: {run.output_text}    score (sum of log-probabilities): {run.score:.4f}")
    wrong = right_answer(lens, text, run.output_text)
    if wrong is not None:
        st.warning(md(wrong))
    with st.sidebar if present else st.container():  # on a projector: a line more of figure
        show.record(
            run, "decode_json", f"decode-{run.strategy}", "Download record (JSON)",
            instead="attnlens decode … --out writes it from the command line.",
        )  # fmt: skip
    tabs = view_tabs()
    with tabs["steps"]:
        if tabs["steps"].open:
            step_view(lens, run)
    with tabs["versus"]:
        if tabs["versus"].open:
            versus(lens, text, kwargs)
    with tabs["what-if"]:
        if tabs["what-if"].open:
            what_if_view(lens, text, kwargs, run)


def view_tabs() -> dict[str, Any]:
    """The tabs, the open one kept in the URL (view=…); a link that forces a token or ablates
    heads, and names no view, opens on what-if, where its result shows."""
    asked = urlstate.remembered("force", None) or urlstate.remembered("ablate", None)
    default = "what-if" if asked else "steps"
    if st.session_state.get("w_view") not in VIEWS.values():  # first drawn, or a bad link
        held = urlstate.remembered("view", default, str)
        st.session_state["w_view"] = VIEWS.get(held, VIEWS[default])
    tabs = st.tabs(list(VIEWS.values()), key="w_view", on_change="rerun")
    urlstate.remember("view", next(k for k, v in VIEWS.items() if v == st.session_state["w_view"]))
    return dict(zip(VIEWS, tabs, strict=True))


def what_if_view(lens: Lens, text: str, kwargs: dict[str, Any], run: DecodeRun) -> None:
    """Force a token or silence heads, and the run decoded again beside the first."""
    st.caption("Force a token at one step, or silence heads, and decode again.")
    force, ablate = what_if(lens, int(kwargs["max_len"]))
    if force or ablate:
        changed = decoded(lens, text, "what_if", **{**kwargs, "force": force, "ablate": ablate})
        if changed is not None:
            new = [w for w in changed.warnings if w not in run.warnings]  # e.g. forced after
            if new:  # the output ended
                st.warning(md_items(new))
            st.text(f"Before: {run.output_text}  ({run.score:.4f})")
            st.text(f"After:  {changed.output_text}  ({changed.score:.4f})")
            show.table(steps_viz.output_change(run, changed), "what_if_table", "what-if")


MEAN = "mean of heads"
# the beam tree's plot width (px, on a 1400 px screen; on a 1920 px projector beside the
# sidebar) and its text size: the steps whose labels fit side by side are in view
TREE_PX = {False: (1000.0, float(BASE_FONT)), True: (1450.0, float(PROJECTOR_FONT))}


def _head_or_mean(value: object) -> int | str:
    return MEAN if value == MEAN else int(str(value))


def _stepped(n: int) -> None:
    """The step the page moved to, kept (a value that is not a step of this run is not)."""
    step = stepped(n)
    if step is not None:
        st.session_state["w_step"] = step


def _moved() -> None:
    """The server moves the step itself (a click in the tree): the page is to show it."""
    st.session_state["_step_moved"] = int(st.session_state.get("_step_moved", 0)) + 1


def _follow_clicked(n: int) -> None:
    """A click on a kept node of the beam tree follows that beam and moves to its step (the
    node's customdata is [step, beam]; the pruned counts carry none)."""
    point = show.clicked_point("beam_tree")
    data = None if point is None else point.get("customdata")
    if data:
        step, beam = (int(v) for v in data[:2])
        urlstate.remember("follow", f"{step}.{beam}")
        st.session_state["w_step"] = min(max(step, 0), n - 1)
        _moved()


def _follow_output() -> None:
    urlstate.forget("follow")


def _signature(run: DecodeRun) -> str:
    return repr((run.src_tokens, run.strategy, sorted(map(repr, run.params.items()))))


def followed_node(run: DecodeRun) -> Node | None:
    """The beam this session follows (kept in the URL as "follow=STEP.BEAM"), or None for
    the output's. A new run (other text or settings) starts again from the output's."""
    signature = _signature(run)
    if st.session_state.get("_follow_run", signature) != signature:
        urlstate.forget("follow")
    st.session_state["_follow_run"] = signature
    held = urlstate.remembered("follow", None, str)
    if not held:
        return None
    try:
        node = check_node(run, [int(v) for v in held.split(".")])
    except ValueError:  # a bad link, or a node this run lacks: the output's path instead
        return None
    return None if extended(run, node) == output_node(run) else node


@st.fragment
def step_view(lens: Lens, run: DecodeRun) -> None:
    """The step-through, drawn in the browser from every step at once (app/web/decode/step_view.py):
    moving it shows the step's candidates and attention with no rerun to wait for; this
    fragment then reruns for what follows from the step (table, tree, downloads, URL)."""
    n = len(run.steps)
    urlstate.prepare("w_step", "step", 0, int, list(range(n)))
    step = int(st.session_state["w_step"])
    urlstate.remember("step", step)
    node = followed_node(run)
    if node is not None:
        st.button("Follow the output again", on_click=_follow_output, key="follow_output")
    assert run.model is not None
    pickers = st.columns([1, 1, 2, 2]) if show.presenting() else st.columns([1, 1, 2, 1])
    layer, head = layer_head_pickers(*run.model.shape("cross"), (pickers[0], pickers[1]))
    measure = measure_picker(pickers[2], run)
    whose = "the output's path" if node is None else (
        f"the beam you follow (step {node[0]}, beam {node[1]}; orange in the tree)"
    )  # fmt: skip
    moved = f"{_signature(run)}:{st.session_state.get('_step_moved', 0)}"
    data = steps_viz.steps_data(run, layer, head, node, step, measure=measure)  # a window
    show_steps(data, step, moved, whose, show.presenting(), on_step=lambda: _stepped(n))
    row = followed_row(run, step, node)
    if row is not None:
        left, right = (st.container(), st.container()) if show.presenting() else st.columns(2)
        with left:
            st.caption(md(f"Step {step}'s candidates as a table, and their chart to download:"))
            frame = steps_viz.candidates_frame(run, step, row)
            show.table(frame, "candidates", f"candidates-step{step}")
            bars = show.styled(viz.candidate_bars(run, step, row, node))
            show.download_buttons(bars, "candidates_chart", f"candidates-step{step}")
        with right:
            st.caption(md(f"Step {step}'s attention, layer {layer} · head {head}, to download:"))
            fig = show.styled(steps_viz.step_attention(run, step, layer, head, row, measure))
            kind = "cross" if "cross" in run.model.kinds else "decoder_self"  # what a step shows
            name = figure_name(kind, layer, head, f"step{step}" + ("-norm" * (measure == "norm")))
            show.download_buttons(fig, "step_attention", name)
        wrote_view(lens, run, step, row, followed(run, step, node)[step].token)
    width, font = TREE_PX[show.presenting()]
    tree = viz.beam_tree(run, node, font)
    tree = clickable(steps_viz.up_to_step(tree, step, steps_that_fit(run, width, font)))
    show.figure(tree, "beam_tree", f"beam-tree-step{step}", lambda: _follow_clicked(n))
    if run.strategy == "beam":
        st.caption("Click a node to follow that beam; the output's path is red.")


def versus(lens: Lens, text: str, kwargs: dict[str, Any]) -> None:
    """The same input decoded greedily, by beam search and by sampling (the settings above,
    the sampling seed included): scores, outputs, and what one head looked at each step."""
    base = {k: v for k, v in kwargs.items() if k not in ("strategy", "seed")}
    seed = int(st.session_state.get("w_seed", 0))
    named: dict[str, dict[str, Any]] = {
        "greedy": {"strategy": "greedy"},
        f"beam (k={base['beam_size']})": {"strategy": "beam"},
        f"sample (seed {seed})": {"strategy": "sample", "seed": seed},
    }
    runs: dict[str, DecodeRun] = {}
    for name, extra in named.items():
        run = decoded(lens, text, f"versus_{extra['strategy']}", **{**base, **extra})
        if run is None:
            return
        runs[name] = run
    for col, (name, run) in zip(st.columns(len(runs)), runs.items(), strict=True):
        col.metric(name, f"{run.score:.4f}", help="sum of natural-log probabilities")
        col.text(run.output_text)
    show.figure(viz.compare_runs(runs), "versus_chart", "side-by-side")
    show.table(steps_viz.runs_table(runs), "versus", "side-by-side")
    if lens.capabilities.takes_target:  # a source each step looked at
        looked_at(runs, *lens.info.shape("cross"))
    else:
        st.caption(md(
            f"What one head looked at as each token was chosen is the cross-attention row of "
            f"that step, on the source: {lens.info.name} is decoder-only and has none. Its "
            "self-attention at each step is on the Step by step tab."
        ))  # fmt: skip


@st.fragment
def looked_at(runs: dict[str, DecodeRun], n_layers: int, n_heads: int) -> None:
    """Each run's chosen tokens against the source row one head gave them. The layer and head
    are kept in the URL (vs_layer, vs_head), and so across a visit to the other tabs."""
    st.subheader("What one head looked at as each token was chosen")
    cols = st.columns(2)
    layers, heads = list(range(n_layers)), [MEAN, *range(n_heads)]
    urlstate.prepare("w_vs_layer", "vs_layer", n_layers - 1, int, layers)
    urlstate.prepare("w_vs_head", "vs_head", MEAN, _head_or_mean, heads)
    layer = int(cols[0].selectbox("Layer", layers, key="w_vs_layer"))
    picked = cols[1].selectbox("Head", heads, key="w_vs_head")
    urlstate.remember("vs_layer", layer)
    urlstate.remember("vs_head", picked)
    head = None if picked == MEAN else int(picked)
    # side by side on a screen; on a projector each the full width (a third of a 1920 px page
    # at projector type left 16 source columns about 50 px)
    places = [st.container() for _ in runs] if show.presenting() else st.columns(len(runs))
    for col, (name, run) in zip(places, runs.items(), strict=True):
        with col:
            fig = viz.decoding_alignment(run, layer, head)
            fig.update_layout(title_text=name)
            which = "mean" if head is None else f"head{head}"
            file = f"cross-layer{layer}-{which}-{run.strategy}"
            show.figure(fig, f"looked_at_{run.strategy}", file)


page()
