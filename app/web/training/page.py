"""Training: the same head, snapshot by snapshot, as the pattern emerges."""

from __future__ import annotations

import streamlit as st

from attnlens import viz
from attnlens.app.web import show, urlstate
from attnlens.app.web.downloads import figure_name
from attnlens.app.web.pickers import kind_picker, layer_head_pickers, memo, text_input, traced
from attnlens.app.web.resources import load_snapshot, snapshot_scores
from attnlens.app.web.safe_text import md
from attnlens.app.web.scaffold import page_start
from attnlens.model.lenses.lens import Lens
from attnlens.model.training.snapshots import SCORE_EXAMPLES, Snapshot


def page() -> None:
    lens = page_start("training", "Training")
    if lens is None:
        return
    can = lens.capabilities
    if can.training is None:
        st.info(md(f"{can.reason('training')}. Pick a bundled model that was trained with them."))
        return
    found = can.training.snapshots()
    st.caption(md(f"{len(found)} snapshots, from step {found[0].step} to {found[-1].step}."))
    text = text_input(lens)
    emerging(lens, text, found, str(st.session_state.get("_model", "")))


@st.fragment
def emerging(final: Lens, text: str, found: list[Snapshot], name: str) -> None:
    """Slide over training; the snapshot's attention is drawn beside the finished model's."""
    by_step = {s.step: s for s in found}
    urlstate.prepare("w_snapshot", "snapshot", found[-1].step, int, list(by_step))
    if len(found) > 1:
        step = st.select_slider("Training step", list(by_step), key="w_snapshot")
    else:
        step = found[0].step
    urlstate.remember("snapshot", step)
    early = load_snapshot(name, int(step))
    if early is None:
        return
    try:
        output = memo("final_output", (id(final), text), lambda: final.decode(text).output_text)
    except ValueError as err:
        st.error(md(err))
        return
    # both teacher-forced on the finished model's output: the same tokens, so the same axes
    # (a decoder-only model's trace of the text alone would hold the prompt only)
    tr_final = traced(final, text, output)
    if tr_final is None:
        return
    tr_early = traced(early, text, output, slot="snapshot_trace")
    if tr_early is None:
        return
    cols = st.columns(3)
    kind = kind_picker(tr_final, cols[0])
    layer, head = layer_head_pickers(*tr_final.model.shape(kind), (cols[1], cols[2]))
    # side by side on a screen; on a projector each the full width (projector type in half
    # a 1920 px page cut the figure titles)
    left, right = (st.container(), st.container()) if show.presenting() else st.columns(2)
    with left:
        st.subheader(f"after {step} steps")
        st.text("Teacher-forced on the finished model's output")
        fig = viz.head_heatmap(tr_early, kind, layer, head)
        show.figure(fig, "snapshot_heatmap", figure_name(kind, layer, head, f"step{step}"))
    with right:
        st.subheader("finished model")
        st.text("Output: " + output)
        fig = viz.head_heatmap(tr_final, kind, layer, head)
        show.figure(fig, "final_heatmap", figure_name(kind, layer, head, "final"))
    progress(final, name, found, int(step), (layer, head) if kind == "cross" else None)


def progress(
    final: Lens, name: str, found: list[Snapshot], step: int, head: tuple[int, int] | None
) -> None:
    """Loss and held-out scores along training, the shown snapshot marked. The scores are
    computed in the background on a first visit: the loss curve shows at once, the scores
    join it when they are ready."""
    training = final.capabilities.training
    loss_steps, losses = training.loss_curve() if training is not None else ([], [])
    try:
        scored = snapshot_scores(name)
    except Exception as err:  # a failed scoring leaves the loss curve; say why, no traceback
        st.warning(md(f"Could not score the snapshots of {name}: {err}"))
        scored = []
    if scored is None:
        scores_pending(name, len(found))
        scored = []
    if not scored and not losses:
        return
    scores: dict[str, list[float]] = {}
    if scored:
        scores["exact match"] = [s.exact for s in scored]
        scores["best head aligned"] = [s.best_alignment for s in scored]
        if head is not None:
            scores[f"layer {head[0]} head {head[1]} aligned"] = [
                float(s.head_alignment[head]) for s in scored
            ]
    fig = viz.training_curve(loss_steps, losses, [s.step for s in found], scores, step)
    show.figure(fig, "training_curve", f"training-step{step}")
    if scored:
        st.caption(
            "Held-out examples of the model's task: exact match of greedy outputs, and the "
            "share of target tokens whose cross-attention argmax is their true source."
        )


@st.fragment(run_every="2s")
def scores_pending(name: str, n: int) -> None:
    """While the scores are computed, say so; once they are ready, draw the page again."""
    try:
        ready = snapshot_scores(name) is not None
    except Exception:  # failed: the next full run says why
        ready = True
    if ready:
        st.rerun()
    st.caption(
        md(
            f"Scoring {n} snapshots on {SCORE_EXAMPLES} held-out examples in the background "
            "(once per server, about half a minute); the scores join the curve when ready."
        )
    )


page()
