"""The figure of each kind of slide, drawn on a live input (slides.py puts a slide together:
its kind of attention, layer, head and step in `Shown`, its question and reveal)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go

from attnlens.app.teaching.deck import Slide
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import N_OPTIONS, Question
from attnlens.record.trace import Kind
from attnlens.viz.heads.heatmap import head_heatmap
from attnlens.viz.lecture.architecture import architecture_diagram
from attnlens.viz.lecture.causal_build import causal_build
from attnlens.viz.lecture.heads_row import heads_row
from attnlens.viz.lecture.input_positions import input_positions, input_tokens
from attnlens.viz.lecture.output_softmax import next_token_bars, reshape, strategies_view
from attnlens.viz.lecture.padding_view import padding_view
from attnlens.viz.lecture.qkv_view import qkv_view
from attnlens.viz.lecture.saturation import saturation_view, telling_row

SAMPLE_SEED = 0


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


def _stacks(slide: Slide, live: LiveInput, shown: Shown) -> go.Figure:
    """Figure 1 with this input going in: the text, and the decoder's shifted-right input."""
    tr = live.trace
    if tr.self_kind == "decoder_self":  # the text goes in on the decoder side
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
    "carried": _heatmap,  # where the head looks: what it carries is the question's reveal
}
