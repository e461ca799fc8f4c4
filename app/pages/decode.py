"""Decode: watch greedy, beam search or sampling step by step, and ask what-if."""

from __future__ import annotations

from typing import Any

import streamlit as st

import viz
import viz.decode_step as steps_viz
from app import show, urlstate
from app.decoding_controls import decoded, settings, what_if
from app.frame import page_start
from app.inputs import layer_head_pickers, text_input
from app.safe_text import md
from model import Lens
from model.decoding import DecodeRun


def page() -> None:
    lens = page_start("decode", "Decode")
    if lens is None:
        return
    text = text_input(lens)
    kwargs = settings(lens)
    run = decoded(lens, text, "decode", **kwargs)
    if run is None:
        return
    for warning in run.warnings:
        st.warning(md(warning))
    st.text(f"Output: {run.output_text}    score (sum of log-probabilities): {run.score:.4f}")
    show.record(run.to_json, "decode_json", f"decode-{run.strategy}", "Download record (JSON)")
    step_view(run)
    st.header("Greedy vs beam search")
    versus(lens, text, kwargs)
    st.header("What if…")
    st.caption("Force a token at one step, or silence heads, and decode again.")
    force, ablate = what_if(lens, len(run.steps))
    if force or ablate:
        changed = decoded(lens, text, "what_if", **{**kwargs, "force": force, "ablate": ablate})
        if changed is not None:
            st.text(f"Before: {run.output_text}  ({run.score:.4f})")
            st.text(f"After:  {changed.output_text}  ({changed.score:.4f})")
            show.table(steps_viz.output_change(run, changed), "what_if_table", "what-if")


def _move(delta: int, n: int) -> None:
    st.session_state["w_step"] = min(max(int(st.session_state.get("w_step", 0)) + delta, 0), n - 1)


def _go_to_clicked(n: int) -> None:
    """A click on a beam-tree node moves to its step (the tree's x axis is the step)."""
    point = show.clicked_point("beam_tree")
    if point is not None and point.get("x") is not None:
        st.session_state["w_step"] = min(max(round(float(point["x"])), 0), n - 1)


@st.fragment
def step_view(run: DecodeRun) -> None:
    """The step slider and everything drawn for one step; moving it runs no model."""
    n = len(run.steps)
    urlstate.prepare("w_step", "step", 0, int, list(range(n)))
    cols = st.columns([1, 1, 6])
    cols[0].button("◀ previous", on_click=_move, args=(-1, n), key="step_prev")
    cols[1].button("next ▶", on_click=_move, args=(1, n), key="step_next")
    if n > 1:
        step = int(cols[2].slider("Step", 0, n - 1, key="w_step"))
    else:
        step = 0
        cols[2].text("One step only.")
    urlstate.remember("step", step)
    st.text("Tokens so far: " + " ".join(steps_viz.tokens_so_far(run, step)))
    assert run.model is not None
    layer, head = layer_head_pickers(run.model.n_layers, run.model.n_heads)
    left, right = st.columns(2)
    with left:
        row = steps_viz.followed_row(run, step)
        show.figure(viz.candidate_bars(run, step, row), "candidates_chart", f"candidates-{step}")
        show.table(steps_viz.candidates_frame(run, step, row), "candidates", f"candidates-{step}")
    with right:
        fig = steps_viz.step_attention(run, step, layer, head)
        show.figure(fig, "step_attention", f"step-{step}-attention-{layer}-{head}")
    tree = steps_viz.up_to_step(viz.beam_tree(run), step)
    show.figure(tree, "beam_tree", f"beam-tree-step-{step}", lambda: _go_to_clicked(n))


def versus(lens: Lens, text: str, kwargs: dict[str, Any]) -> None:
    """The same input decoded greedily and by beam search, scores side by side."""
    base = {k: v for k, v in kwargs.items() if k not in ("strategy", "seed")}
    greedy = decoded(lens, text, "greedy", **{**base, "strategy": "greedy"})
    beam = decoded(lens, text, "beam", **{**base, "strategy": "beam"})
    if greedy is None or beam is None:
        return
    cols = st.columns(2)
    for col, (name, run) in zip(
        cols, (("greedy", greedy), (f"beam (k={base['beam_size']})", beam)), strict=True
    ):
        col.metric(name, f"{run.score:.4f}", help="sum of natural-log probabilities")
        col.text(run.output_text)
    runs = {"greedy": greedy, "beam": beam}
    show.figure(viz.compare_runs(runs), "versus_chart", "greedy-vs-beam")
    show.table(steps_viz.runs_table(runs), "versus", "greedy-vs-beam")


page()
