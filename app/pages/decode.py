"""Decode: watch greedy, beam search or sampling step by step, and ask what-if."""

from __future__ import annotations

from typing import Any

import streamlit as st

from attnlens import Lens, viz
from attnlens.app import show, urlstate
from attnlens.app.click_targets import clickable
from attnlens.app.decoding_controls import decoded, settings, what_if
from attnlens.app.inputs import layer_head_pickers, text_input
from attnlens.app.safe_text import md
from attnlens.app.scaffold import page_start
from attnlens.record.decode import DecodeRun
from attnlens.viz import decode_step as steps_viz


def page() -> None:
    lens = page_start("decode", "Decode")
    if lens is None:
        return
    text = text_input(lens)
    kwargs = settings(lens, text)
    run = decoded(lens, text, "decode", **kwargs)
    if run is None:
        return
    for warning in run.warnings:
        st.warning(md(warning))
    st.text(f"Output: {run.output_text}    score (sum of log-probabilities): {run.score:.4f}")
    show.record(run, "decode_json", f"decode-{run.strategy}", "Download record (JSON)")
    step_view(run)
    st.header("Greedy, beam search and sampling side by side")
    versus(lens, text, kwargs)
    st.header("What if…")
    st.caption("Force a token at one step, or silence heads, and decode again.")
    force, ablate = what_if(lens, int(kwargs["max_len"]))
    if force or ablate:
        changed = decoded(lens, text, "what_if", **{**kwargs, "force": force, "ablate": ablate})
        if changed is not None:
            for warning in changed.warnings:
                if warning not in run.warnings:  # e.g. a token forced after the output ended
                    st.warning(md(warning))
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
    layer, head = layer_head_pickers(*run.model.shape("cross"))  # the decoder's layers
    left, right = st.columns(2)
    with left:
        row = steps_viz.followed_row(run, step)
        show.figure(viz.candidate_bars(run, step, row), "candidates_chart", f"candidates-{step}")
        show.let_it_draw()  # the step's candidates are drawn before the rest arrives
        show.table(steps_viz.candidates_frame(run, step, row), "candidates", f"candidates-{step}")
    with right:
        fig = steps_viz.step_attention(run, step, layer, head)
        show.figure(fig, "step_attention", f"step-{step}-attention-{layer}-{head}")
    tree = clickable(steps_viz.up_to_step(viz.beam_tree(run), step))
    show.figure(tree, "beam_tree", f"beam-tree-step-{step}", lambda: _go_to_clicked(n))


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
    if lens.info.architecture == "encoder-decoder":
        looked_at(runs, *lens.info.shape("cross"))


@st.fragment
def looked_at(runs: dict[str, DecodeRun], n_layers: int, n_heads: int) -> None:
    """Each run's chosen tokens against the source row one head gave them."""
    st.subheader("What one head looked at as each token was chosen")
    cols = st.columns(2)
    layer = int(cols[0].selectbox("Layer", range(n_layers), n_layers - 1, key="w_vs_layer"))
    heads = ["mean of heads", *range(n_heads)]
    picked = cols[1].selectbox("Head", heads, key="w_vs_head")
    head = None if picked == "mean of heads" else int(picked)
    for col, (name, run) in zip(st.columns(len(runs)), runs.items(), strict=True):
        with col:
            fig = viz.decoding_alignment(run, layer, head)
            fig.update_layout(title=name)
            show.figure(fig, f"looked_at_{run.strategy}", f"{run.strategy}-alignment-{layer}")


page()
