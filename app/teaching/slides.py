"""A slide drawn on a live input: its figure, its question (if a fair one exists) and the reveal.

No Streamlit here: the lecture page, the class and the tests all build slides the same way.
Whatever the model cannot give becomes a message, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import plotly.graph_objects as go

from attnlens.app.teaching.deck import Slide
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import NoQuestion, Question
from attnlens.app.teaching.slide_figures import FIGURES, Shown
from attnlens.app.teaching.slide_questions import after_question, reveal, slide_question
from attnlens.app.teaching.view import View
from attnlens.record.picking import KIND_TITLES
from attnlens.record.trace import Kind, Trace
from attnlens.viz.lecture import reveal as reveal_viz

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
WEIGHT_TRACES = ("weight", "weights")


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
        built.question = slide_question(slide, live, shown, view, earlier) if slide.ask else None
        built.shown = shown = after_question(shown, built.question, slide, live, view)
        if slide.figure == "stacks" and tr.model.architecture != "encoder-decoder":
            built.notes.append(one_stack(tr))  # the slide's text is the paper's two stacks
        if slide.figure != "title":
            built.figure = FIGURES[slide.figure](slide, live, shown)
        asked = shown.asked
        if asked is not None and asked.ask == "where" and built.figure is not None:
            names = (*WEIGHT_TRACES, f"head {shown.head}")
            built.figure = reveal_viz.blank_row(built.figure, asked.query or 0, names)
        if isinstance(built.question, Question):
            built.reveal = reveal(built.question, live)
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
        return slide_question(slide, live, shown, view, asked)
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


def one_stack(tr: Trace) -> str:
    """What a decoder-only or encoder-only model has, beside a slide on the paper's two stacks."""
    kind = tr.kinds[0]
    layers = tr.model.shape(kind)[0]
    if tr.model.architecture == "decoder":
        has = "masked self-attention (each position sees only those before it)"
        lacks = "no encoder, no memory and no encoder–decoder attention"
    else:
        has = "self-attention over the whole input"
        lacks = "no decoder, nothing written token by token and no encoder–decoder attention"
    return (
        f"{tr.model.name} is {_architecture(tr)}: one stack of {layers} layers, each "
        f"{has} then a feed-forward network; {lacks}. The text describes the paper's two stacks."
    )


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
