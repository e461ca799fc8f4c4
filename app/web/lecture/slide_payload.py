"""A class's slide as the payload its students' browsers draw (app/classroom/slide_route.py
serves it; board.py's FOLLOW_HTML draws it): built once per class version and screen (a
projector, a student's screen, a phone's), from the same shared slide build the pages draw
(resources.built_slide), never once per student; a phone's figure is that build laid out again
for a phone's width (slide_sizes.phoned), on a copy.

What differs between students (their nickname, their own answer) is not in it: the page gives
the nickname, the answer route the answer.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import plotly.graph_objects as go
import plotly.io as pio
from markdown_it import MarkdownIt

from attnlens.app.classroom.route_parts import PHONE, PROJECTOR
from attnlens.app.classroom.slide_route import SlideUnavailableError
from attnlens.app.classroom.state import ClassState
from attnlens.app.teaching.deck import Deck, Slide
from attnlens.app.teaching.questions import NoQuestion, Question
from attnlens.app.teaching.slide_sizes import phoned
from attnlens.app.teaching.slides import Built
from attnlens.app.teaching.view import View, input_text, model_name
from attnlens.app.web.lecture.ask import HISTOGRAM_HEIGHT, LETTERS
from attnlens.app.web.lecture.resources import built_slide, library, sized, this_store
from attnlens.app.web.resources import shared_lens
from attnlens.model.lenses.registry import check_allowed
from attnlens.viz.lecture.reveal import class_answers

# CommonMark, raw HTML off: a deck's words are Markdown, and never HTML on a student's page.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def words_html(text: str) -> str:
    """A deck author's Markdown as HTML; any HTML in it comes out as text."""
    return str(_MARKDOWN.render(text))


def lettered(question: Question, i: int) -> str:
    """An option as shown, lettered: "B · 3 · e" (plain text)."""
    return f"{LETTERS[i]} · {question.options[i]}"


def slide_payload(code: str, state: ClassState, screen: str) -> bytes:
    """The class's slide at `state` as JSON bytes, for a projector, a screen or a phone
    (`screen`: route_parts.PROJECTOR, SCREEN or PHONE)."""
    deck = library().decks.get(state.deck)
    if deck is None:
        raise SlideUnavailableError(f"the teacher's deck {state.deck!r} is not on this server")
    slide = deck.slides[min(state.slide, len(deck.slides) - 1)]
    view = View.from_dict(state.view)
    model = model_name(deck, slide, view)
    try:
        check_allowed(model)
        lens = shared_lens(model)
    except Exception as err:  # not allowed here, or it cannot load: the student is told why
        raise SlideUnavailableError(f"model {model!r} cannot be loaded: {err}") from err
    text = input_text(deck, slide, view, lens.example)
    built = built_slide(deck.name, slide.number, view, model, text, screen == PROJECTOR)
    asked = Question.from_dict(state.question) if state.question else None
    same = asked is not None and isinstance(built.question, Question)
    same = same and built.question.id == asked.id  # type: ignore[union-attr]
    revealed = asked is not None and state.revealed == asked.id
    shown = built.reveal if revealed and same and built.reveal is not None else built.figure
    title_slide = slide.figure == "title"
    payload = {
        "code": code,
        "version": state.version,
        "header": _header(deck, slide, model),
        "figure": None if title_slide else _figure(shown, screen),
        "problem": built.problem,
        "notes": list(built.notes),
        "words": "" if title_slide else words_html(slide.words),
        "question": _question(asked if asked is not None else built.question, revealed),
        "histogram": _histogram(code, asked, screen) if revealed and asked else None,
        "explore": explore_link(model, text, built),
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def _header(deck: Deck, slide: Slide, model: str) -> dict[str, Any]:
    section = f"§{slide.section} · " if slide.section and slide.section[0].isdigit() else ""
    return {"title": slide.title, "number": slide.number, "count": len(deck.slides),
            "caption": f"{section}{deck.title} · {model}"}  # fmt: skip


def _figure(fig: go.Figure | None, screen: str) -> Any:
    """The figure as JSON; on a phone a copy laid out again (the build is every page's)."""
    if fig is not None and screen == PHONE:
        fig = phoned(go.Figure(fig))
    return None if fig is None else json.loads(pio.to_json(fig, validate=False))


def _question(question: Question | NoQuestion | None, revealed: bool) -> dict[str, Any] | None:
    """The question as a student sees it: its answer and why only once revealed."""
    if isinstance(question, NoQuestion):
        return {"none": f"No question on this input: {question.reason}."}
    if question is None:
        return None
    shown: dict[str, Any] = {
        "id": question.id,
        "prompt": question.prompt,
        "options": [lettered(question, i) for i in range(len(question.options))],
        "revealed": revealed,
    }
    if revealed:
        shown.update(answer=question.answer, why=question.why)
    return shown


def _histogram(code: str, question: Question, screen: str) -> Any:
    """The class's answers, as counted when the teacher revealed them (none are taken after)."""
    counts = this_store().counts(code, question.id, len(question.options))
    fig = sized(class_answers(question.options, counts, question.answer), screen == PROJECTOR)
    fig.update_layout(height=HISTOGRAM_HEIGHT)
    return _figure(fig, screen)


def explore_params(model: str, text: str, built: Built) -> dict[str, str]:
    """The Explore page's URL parameters for this slide's model, input, attention, layer and
    head."""
    shown = built.shown
    params = {"page": "explore", "model": model, "text": text}
    if shown.kind is not None:
        params.update(kind=shown.kind, layer=str(shown.layer), head=str(shown.head))
    return params


def explore_link(model: str, text: str, built: Built) -> str:
    """The Explore page on this slide (a new tab, the lecture kept in this one)."""
    return "./explore?" + urlencode(explore_params(model, text, built))
