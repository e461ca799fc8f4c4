"""A slide drawn on a live input: its figure, its question (if a fair one exists) and the reveal.

No Streamlit here: the lecture page, the class and the tests all build slides the same way.
Whatever the model cannot give becomes a message, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from attnlens.app.teaching.deck import Slide
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import (
    N_OPTIONS,
    Job,
    NoQuestion,
    Question,
    beam_question,
    greedy_question,
    head_question,
    head_scores,
    where_question,
)
from attnlens.app.teaching.view import View
from attnlens.record.decode import DecodeRun
from attnlens.record.picking import KIND_TITLES, true_source_hits
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.heatmap import head_heatmap
from attnlens.viz.lecture import reveal as reveal_viz
from attnlens.viz.lecture.architecture import architecture_diagram
from attnlens.viz.lecture.causal_build import causal_build
from attnlens.viz.lecture.heads_row import heads_row
from attnlens.viz.lecture.input_positions import input_positions, input_tokens
from attnlens.viz.lecture.output_softmax import next_token_bars, reshape, strategies_view
from attnlens.viz.lecture.padding_view import padding_view
from attnlens.viz.lecture.qkv_view import qkv_view
from attnlens.viz.lecture.saturation import saturation_view, telling_row

DEFAULT_KIND: dict[str, Kind] = {
    "qkv": "encoder_self",
    "scaling": "encoder_self",
    "heads": "encoder_self",
    "heatmap": "encoder_self",
    "causal": "decoder_self",
    "cross": "cross",
}
NEEDS_KIND = {"causal": "decoder_self", "cross": "cross"}  # no stand-in will do
FIRST_LAYER = {"qkv", "scaling", "heads", "causal"}  # their layer defaults to 0, others last
SAMPLE_SEED = 0
WEIGHT_TRACES = ("weight", "weights")
JOBS: dict[str, Job] = {
    "previous-head": "previous",
    "alignment-head": "alignment",
}  # the heatmap traces that hold a head's weights


@dataclass(frozen=True)
class Shown:
    """What a slide is drawn with after the slide, the view and the model are put together."""

    kind: Kind | None = None
    layer: int | None = None
    head: int | None = None
    step: int | None = None
    layers: int = 0  # how many the model has, for the teacher's controls
    heads: int = 0
    steps: int = 0
    asked: Question | None = None  # the question on screen: its answer stays hidden


@dataclass
class Built:
    """A slide ready to show: the figure (or why there is none), notes, question, reveal."""

    name: str
    figure: go.Figure | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    question: Question | NoQuestion | None = None
    reveal: go.Figure | None = None
    shown: Shown = field(default_factory=Shown)


def build(slide: Slide, live: LiveInput, view: View, earlier: Sequence[Question] = ()) -> Built:
    """The slide's figure, question and reveal on this input, or a message where the model
    cannot give them (no decoder, no projections, bad input). `earlier`: the questions earlier
    slides of its deck ask, which this one does not ask again (deck_questions.py)."""
    built = Built(slide.figure)
    try:
        tr = live.trace
        kind = _kind(slide, tr, built)
        shown = _resolve(slide, tr, kind, view, built)
        built.question = _question(slide, live, shown, view, earlier) if slide.ask else None
        built.shown = shown = _after_question(shown, built.question, slide, live, view)
        if slide.figure != "title":
            built.figure = FIGURES[slide.figure](slide, live, shown)
        asked = shown.asked
        if asked is not None and asked.ask == "where" and built.figure is not None:
            names = (*WEIGHT_TRACES, f"head {shown.head}")
            built.figure = reveal_viz.blank_row(built.figure, asked.query or 0, names)
        if isinstance(built.question, Question):
            built.reveal = _reveal(built.question, live)
    except ValueError as err:  # InputError and every figure's "cannot" are ValueErrors
        built.problem, built.question, built.reveal = str(err), None, None
    if built.figure is not None:
        built.figure.update_layout(meta={"figure": slide.figure})
    return built


def question_of(
    slide: Slide, live: LiveInput, view: View, asked: Sequence[Question] = ()
) -> Question | NoQuestion | None:
    """The question the slide asks on this input (as `build` gives it), without its figure."""
    if not slide.ask:
        return None
    built = Built(slide.figure)  # for the notes, unused here
    try:
        shown = _resolve(slide, live.trace, _kind(slide, live.trace, built), view, built)
        return _question(slide, live, shown, view, asked)
    except ValueError:
        return None


def _kind(slide: Slide, tr: Trace, built: Built) -> Kind | None:
    """The slide's kind of attention, or the nearest this model records, with a note."""
    wanted = slide.kind or slide.highlight or DEFAULT_KIND.get(slide.figure)
    if wanted is None or wanted in tr.kinds:
        return wanted
    need = NEEDS_KIND.get(slide.figure)
    if need is not None:
        raise ValueError(
            f"{tr.model.name} has no {KIND_TITLES[need]}: it is "
            f"{_architecture(tr)}, so this slide has nothing to show on it"
        )
    other: Kind = "decoder_self" if wanted == "encoder_self" else "encoder_self"
    stand_in = other if other in tr.kinds else tr.kinds[0]
    built.notes.append(
        f"{tr.model.name} has no {KIND_TITLES[wanted]} ({_architecture(tr)}): "
        f"this slide shows its {KIND_TITLES[stand_in]}"
    )
    return stand_in


def _architecture(tr: Trace) -> str:
    return {
        "encoder-decoder": "an encoder–decoder",
        "decoder": "decoder-only",
        "encoder": "encoder-only",
    }[tr.model.architecture]


def _resolve(slide: Slide, tr: Trace, kind: Kind | None, view: View, built: Built) -> Shown:
    """Layer, head and step as numbers the model has; a note when the slide's do not fit."""
    if kind is None:
        return Shown(steps=len(tr.tgt_tokens))
    L, H = tr.model.shape(kind)
    wanted = view.layer if view.layer is not None else slide.layer
    if isinstance(wanted, int):
        layer = wanted
    elif wanted is None:
        layer = 0 if slide.figure in FIRST_LAYER else L - 1
    else:
        layer = 0 if wanted == "first" else L - 1
    if not 0 <= layer < L:
        built.notes.append(f"layer {layer} is past this model's {L} layers: showing layer {L - 1}")
        layer = L - 1
    head = view.head if view.head is not None else slide.head
    if isinstance(head, int) and head >= H:
        built.notes.append(f"head {head} is past this model's {H} heads: choosing one")
        head = None
    step = view.step if view.step is not None else slide.step
    T = len(tr.tgt_tokens)
    if isinstance(step, int) and step >= T and slide.figure == "causal":
        step = T - 1
    head_value = head if isinstance(head, int) else None
    step_value = step if isinstance(step, int) else (T - 1 if step == "last" else None)
    return Shown(kind, layer, head_value, step_value, L, H, T)


def _question(
    slide: Slide, live: LiveInput, shown: Shown, view: View, asked: Sequence[Question] = ()
) -> Question | NoQuestion:
    ask, tr = slide.ask, live.trace
    if ask == "where":
        assert shown.kind is not None and shown.layer is not None
        query = view.step if slide.figure == "causal" else _int(slide.query)
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
    greedy = live.greedy()
    if ask == "greedy-next":
        step = shown.step
        return greedy_question(
            greedy, step if step is not None and step < len(greedy.steps) else None
        )
    return beam_question(greedy, live.beam(slide.beam_size or 4))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _after_question(
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
        layer = _best_layer(live, shown.kind, JOBS[slide.ask], layer)
    if head is None and shown.kind is not None and layer is not None:
        head = _decided_head(live, shown.kind, layer)
    if step is None and slide.figure == "decoding":
        step = _split(live.greedy(), live.beam(slide.beam_size or 4))
    if step is None:
        step = 2 if slide.figure == "causal" else 0
    steps = shown.steps
    if slide.figure in ("softmax", "decoding"):
        steps = len(live.greedy().steps)  # decoding steps, not input positions
    step = min(step, max(0, steps - 1))
    asked = question if isinstance(question, Question) else None
    return Shown(shown.kind, layer, head, step, shown.layers, shown.heads, steps, asked)


def _best_layer(live: LiveInput, kind: Kind, job: Job, layer: int | None) -> int | None:
    """The layer whose best head does the job most: the one a head question with no fair
    answer names in its reason, so the figure shows that layer and not another (`layer`
    where the reason names none)."""
    ref = live.reference() if kind == "cross" else None
    if job == "alignment" and ref is None:
        return layer
    layers = range(live.trace.model.shape(kind)[0])
    return max(layers, key=lambda lay: float(head_scores(live.trace, kind, lay, job, ref).max()))


def _decided_head(live: LiveInput, kind: Kind, layer: int) -> int:
    """Cross-attention: the head whose largest weights land on the true source most often;
    otherwise the head whose rows are most peaked (the highest mean largest weight)."""
    weights = live.trace.attention(kind)
    assert weights is not None
    ref = live.reference() if kind == "cross" else None
    if ref:
        hits = true_source_hits(weights[layer][None], ref)[0]  # (H,)
        return int(np.argmax(hits))
    return int(np.argmax(weights[layer].max(-1).mean(-1)))


def _reveal(question: Question, live: LiveInput) -> go.Figure:
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
    greedy = live.greedy()
    if question.ask == "greedy-next":
        return next_token_bars(greedy, question.step or 0)
    beam = live.beam()
    runs = {"greedy": greedy, f"beam ({beam.params.get('beam_size')})": beam}
    return reveal_viz.scores_bars(runs, list(runs)[question.answer == 0])


def _stacks(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    """Figure 1 with this input going in: the text, and the decoder's shifted-right input."""
    tr = live.trace
    if tr.model.architecture == "decoder":
        source, target = "", f"{tr.tgt_tokens[0]} {live.text}"
    elif tr.tgt_tokens:
        source, target = live.text, f"{tr.tgt_tokens[0]} {live.lens.text_of(tr.tgt_tokens[1:])}"
    else:
        source, target = live.text, ""
    return architecture_diagram(tr.model, source, target, slide.highlight)


def _qkv(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    kind, layer, head = _khl(shown)
    proj = live.projections(kind, layer, head)
    q_tokens, k_tokens = live.trace.shown(kind)
    return qkv_view(proj.q, proj.k, proj.v, q_tokens, k_tokens, proj.mask)


def _scaling(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    kind, layer, head = _khl(shown)
    proj = live.projections(kind, layer, head)
    q_tokens, k_tokens = live.trace.shown(kind)
    row = telling_row(proj.q, proj.k, proj.mask)
    return saturation_view(proj.q, proj.k, row, q_tokens[row], k_tokens, proj.mask)


def _khl(shown: Shown) -> tuple[Kind, int, int]:
    assert shown.kind is not None and shown.layer is not None and shown.head is not None
    return shown.kind, shown.layer, shown.head


def _heads(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    kind, layer, _ = _khl(shown)
    return heads_row(live.trace, kind, layer)


def _causal(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    _, layer, head = _khl(shown)
    return causal_build(live.trace, layer, head, shown.step or 0)


def _padding(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    mine = input_tokens(live.trace)
    partner_text = slide.batch or _shorter(live.text)
    theirs = input_tokens(live.other(partner_text))
    return padding_view([mine, theirs], ["this input", "its batch partner"])


def _shorter(text: str) -> str:
    """A shorter sentence to share a batch with: the first half of the words (or letters)."""
    words = text.split()
    if len(words) > 1:
        return " ".join(words[: max(1, len(words) // 2)])
    return text[: max(1, len(text) // 2)]


def _cross(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    _, layer, head = _khl(shown)
    return head_heatmap(live.trace, "cross", layer, head, live.reference())


def _heatmap(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    kind, layer, head = _khl(shown)
    ref = live.reference() if kind == "cross" else None
    return head_heatmap(live.trace, kind, layer, head, ref)


def _softmax(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    run = live.greedy()
    hide = shown.asked is not None and shown.asked.ask == "greedy-next"
    step = min(shown.step or 0, len(run.steps) - 1)
    return next_token_bars(run, step, hide=hide, limit=N_OPTIONS if hide else None)


def _decoding(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    greedy, beam = live.greedy(), live.beam(slide.beam_size or 4)
    temperature = slide.temperature or 1.0
    sample = live.decode(
        "sample", temperature=temperature, top_k=slide.top_k, top_p=slide.top_p, seed=SAMPLE_SEED
    )
    runs = {"greedy": greedy, f"beam ({beam.params.get('beam_size')})": beam,
            f"sample (T = {temperature:g})": sample}  # fmt: skip
    if shown.asked is not None and shown.asked.ask == "beam-vs-greedy":
        runs = {name: run for name, run in runs.items() if not name.startswith("beam")}
    step = min(shown.step or 0, len(greedy.steps) - 1)
    cands = greedy.steps[step].candidates[0]
    shaped = reshape(
        [c.token for c in cands], [c.prob for c in cands], temperature, slide.top_k, slide.top_p
    )
    cut = ", ".join(
        x
        for x in (
            f"top-k {slide.top_k}" if slide.top_k else "",
            f"top-p {slide.top_p:g}" if slide.top_p else "",
        )
        if x
    )
    settings = f"T = {temperature:g}" + (f", {cut}" if cut else "")
    return strategies_view(runs, step, shaped, settings)


def _split(greedy: DecodeRun, beam: DecodeRun) -> int:
    """The first step where beam search's output leaves greedy's (0 when they agree)."""
    g, b = greedy.output_tokens, beam.output_tokens
    return next((i for i, (x, y) in enumerate(zip(g, b, strict=False)) if x != y), 0)


FIGURES: dict[str, Callable[[Slide, LiveInput, Shown], go.Figure]] = {
    "stacks": _stacks,
    "embeddings": lambda slide, live, shown: input_positions(live.trace),
    "qkv": _qkv,
    "scaling": _scaling,
    "heads": _heads,
    "causal": _causal,
    "padding": _padding,
    "cross": _cross,
    "softmax": _softmax,
    "decoding": _decoding,
    "heatmap": _heatmap,
}
