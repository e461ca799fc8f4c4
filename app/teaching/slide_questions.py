"""What a slide shows and asks on a live input (slides.py builds it): the question it asks,
the layer, head and step that question decides when the slide leaves them to "auto", and the
figure that reveals the answer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnlens.analysis.norm_shares import shares, special_keys
from attnlens.app.teaching.deck import Slide
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import (
    Job,
    NoQuestion,
    Question,
    beam_question,
    carried_question,
    greedy_question,
    head_question,
    head_scores,
    where_question,
)
from attnlens.app.teaching.slide_figures import Shown
from attnlens.app.teaching.view import View
from attnlens.record.decode import DecodeRun
from attnlens.record.picking import true_source_hits
from attnlens.record.trace import Kind
from attnlens.viz.lecture import reveal as reveal_viz
from attnlens.viz.lecture.output_softmax import next_token_bars
from attnlens.viz.measures.carried import shares_by_layer

JOBS: dict[str, Job] = {
    "previous-head": "previous",
    "alignment-head": "alignment",
}  # the heatmap traces that hold a head's weights


def slide_question(
    slide: Slide, live: LiveInput, shown: Shown, view: View, asked: Sequence[Question] = ()
) -> Question | NoQuestion:
    """The question the slide asks on this input, none that `asked` (earlier slides') holds."""
    ask, tr = slide.ask, live.trace
    if ask == "where":
        assert shown.kind is not None and shown.layer is not None
        query = view.step if slide.figure == "causal" else given_int(slide.query)
        if slide.figure == "causal" and query is None:
            query = shown.step
        ref = live.reference() if shown.kind == "cross" else None
        taken = {
            q.head for q in asked if (q.ask, q.kind, q.layer) == (ask, shown.kind, shown.layer)
        }
        return where_question(tr, shown.kind, shown.layer, shown.head, query, ref, taken)
    if ask in ("previous-head", "alignment-head"):
        assert shown.kind is not None
        job = "previous" if ask == "previous-head" else "alignment"
        layer = shown.layer if slide.layer is not None or view.layer is not None else None
        ref = live.reference() if shown.kind == "cross" else None
        return head_question(tr, shown.kind, job, layer, ref)  # type: ignore[arg-type]
    if ask == "carried":
        assert shown.kind is not None and shown.layer is not None
        return carried_question(tr, shown.kind, shown.layer, live.carried(shown.kind), shown.head)
    greedy = live.greedy()
    if ask == "greedy-next":
        step = shown.step
        return greedy_question(
            greedy, step if step is not None and step < len(greedy.steps) else None
        )
    return beam_question(greedy, live.beam(slide.beam_size or 4))


def given_int(value: object) -> int | None:
    """A number the slide gave, None for "auto" and the like."""
    return value if isinstance(value, int) else None


def after_question(
    shown: Shown, question: Question | NoQuestion | None, slide: Slide, live: LiveInput, view: View
) -> Shown:
    """A head or step the slide left to "auto": the question's, else the most decided one."""
    head, step, layer = shown.head, shown.step, shown.layer
    if isinstance(question, Question):
        if head is None and question.head is not None:
            head = question.head
        if question.layer is not None and question.ask.endswith("-head"):
            layer = question.layer
        if step is None and question.step is not None:
            step = question.step
    elif (
        isinstance(question, NoQuestion) and slide.ask in JOBS and shown.kind is not None
        and slide.layer is None and view.layer is None
    ):  # the layer its reason names  # fmt: skip
        layer = best_layer(live, shown.kind, JOBS[slide.ask], layer)
    if head is None and shown.kind is not None and layer is not None:
        head = decided_head(live, shown.kind, layer)
    if step is None and slide.figure == "decoding":
        step = split_step(live.greedy(), live.beam(slide.beam_size or 4))
    if step is None:
        step = 2 if slide.figure == "causal" else 0
    steps = shown.steps
    if slide.figure in ("softmax", "decoding"):
        steps = len(live.greedy().steps)  # decoding steps, not input positions
    step = min(step, max(0, steps - 1))
    asked = question if isinstance(question, Question) else None
    return Shown(shown.kind, layer, head, step, shown.layers, shown.heads, steps, asked)


def best_layer(live: LiveInput, kind: Kind, job: Job, layer: int | None) -> int | None:
    """The layer whose best head does the job most: the one a head question with no fair
    answer names in its reason, so the figure shows that layer and not another (`layer`
    where the reason names none)."""
    ref = live.reference() if kind == "cross" else None
    if job == "alignment" and ref is None:
        return layer
    layers = range(live.trace.model.shape(kind)[0])
    return max(layers, key=lambda lay: float(head_scores(live.trace, kind, lay, job, ref).max()))


def decided_head(live: LiveInput, kind: Kind, layer: int) -> int:
    """Cross-attention: the head whose largest weights land on the true source most often;
    otherwise the head whose rows are most peaked (the highest mean largest weight)."""
    weights = live.trace.attention(kind)
    assert weights is not None
    ref = live.reference() if kind == "cross" else None
    if ref:
        hits = true_source_hits(weights[layer][None], ref)[0]  # (H,)
        return int(np.argmax(hits))
    return int(np.argmax(weights[layer].max(-1).mean(-1)))


def reveal(question: Question, live: LiveInput) -> go.Figure:
    """The figure that shows the answer: the asked row and right cell, the heads' scores, the
    next token's probabilities, or the two searches' scores."""
    if question.ask == "where":
        assert question.kind is not None and question.layer is not None
        assert question.head is not None and question.query is not None and question.key is not None
        ref = live.reference() if question.kind == "cross" else None
        return reveal_viz.where_reveal(
            live.trace,
            question.kind,
            question.layer,
            question.head,
            question.query,
            question.key,
            ref,
        )
    if question.ask.endswith("-head"):
        job = "previous-token" if question.ask == "previous-head" else "alignment"
        head = question.head if question.head is not None else 0
        return reveal_viz.head_scores(
            question.scores, head, f"layer {question.layer}: each head's {job} share"
        )
    if question.ask == "carried":
        assert question.kind is not None
        return carried_reveal(live, question.kind)
    greedy = live.greedy()
    if question.ask == "greedy-next":
        return next_token_bars(greedy, question.step or 0)
    beam = live.beam()
    runs = {"greedy": greedy, f"beam ({beam.params.get('beam_size')})": beam}
    return reveal_viz.scores_bars(runs, list(runs)[question.answer == 0])


def split_step(greedy: DecodeRun, beam: DecodeRun) -> int:
    """The first step where beam search's output leaves greedy's (0 when they agree)."""
    g, b = greedy.output_tokens, beam.output_tokens
    return next((i for i, (x, y) in enumerate(zip(g, b, strict=False)) if x != y), 0)


def carried_reveal(live: LiveInput, kind: Kind) -> go.Figure:
    """Per layer, the heads' weight share on the special tokens beside their share of what the
    heads carry (the mean over heads; analysis/norm_shares.py)."""
    tr = live.trace
    weights = tr.attention(kind)
    assert weights is not None, "a slide's trace keeps its weights"
    keys = special_keys(tr.shown(kind)[1])
    weight, norm = shares(weights.sum(2), live.carried(kind), weights.shape[2], keys)
    names = " + ".join(dict.fromkeys(tr.shown(kind)[1][j] for j in keys))
    fig = shares_by_layer(weight.mean(-1), norm.mean(-1), names)
    return fig.update_layout(title_text=f"{names}: weight vs what heads carry")  # fits a slide
