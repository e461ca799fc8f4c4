"""The slide payload a following student's browser draws: the deck's words rendered with any
HTML in them as text; the slide's figure from the shared build the pages draw (one build for
the page and the payload); the question without its answer until the reveal, then the answer,
why and the class's answers as counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import plotly.io as pio
import pytest

from attnlens.app.classroom.slide_route import SlideUnavailableError
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.stores import open_store
from attnlens.app.teaching.questions import Question
from attnlens.app.teaching.view import View, input_text
from attnlens.app.web.lecture.resources import built_slide, library
from attnlens.app.web.lecture.slide_payload import slide_payload, words_html
from attnlens.app.web.resources import shared_lens
from helpers.apptest import require_bundled

SLIDE = 3  # "Scaled dot-product attention" (4 / 15), which asks a question


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "a <b onclick='x()'>bold</b> word",
        "<div>\n\n<iframe src=//evil></iframe>\n\n</div>",
    ],
)
def test_html_in_a_decks_words_comes_out_as_text(text: str) -> None:
    html = words_html(text)
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert "<b " not in html and "<div>" not in html
    assert "&lt;" in html  # shown, as the author typed it


def test_markdown_in_a_decks_words_is_rendered_and_a_script_link_is_not() -> None:
    html = words_html("**Q·Kᵀ** over `√d_k`\n\n- one\n- two\n\n[x](javascript:alert(1))")
    assert "<strong>Q·Kᵀ</strong>" in html and "<code>√d_k</code>" in html
    assert html.count("<li>") == 2
    assert 'href="javascript' not in html


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", url)
    return url


def payload(code: str, state: ClassState, screen: str = "screen") -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(slide_payload(code, state, screen))
    return loaded


def test_the_payload_is_the_shared_slide_with_its_question_hidden_until_the_reveal(
    store_url: str,
) -> None:
    require_bundled("translate")
    deck = library().decks["section3"]
    slide = deck.slides[SLIDE]
    text = input_text(deck, slide, View(), shared_lens("translate").example)
    built = built_slide("section3", slide.number, View(), "translate", text, projector=False)
    store = open_store(store_url)
    made = store.create(ClassState("section3", SLIDE))
    question = built.question
    assert isinstance(question, Question)
    asked = store.update(made.code, made.key, store.state(made.code).moved(  # type: ignore[union-attr]
        question=question.to_dict(), question_id=question.id))  # fmt: skip
    shown = payload(made.code, asked)
    assert shown["version"] == asked.version and shown["code"] == made.code
    assert shown["header"]["title"] == "Scaled dot-product attention"
    assert (shown["header"]["number"], shown["header"]["count"]) == (4, 15)
    assert shown["figure"] == json.loads(pio.to_json(built.figure, validate=False))  # one build
    assert shown["question"]["id"] == question.id
    assert shown["question"]["options"][1].startswith("B · ")
    assert "answer" not in shown["question"] and "why" not in shown["question"]
    assert shown["histogram"] is None and shown["explore"].startswith("./explore?")
    student = store.join(made.code).id
    assert store.answer(made.code, student, question.id, question.answer)
    revealed = store.update(made.code, made.key, asked.moved(revealed=question.id))
    after = payload(made.code, revealed)
    assert after["question"]["answer"] == question.answer and after["question"]["why"]
    assert after["question"]["revealed"] is True
    counts = after["histogram"]["data"][0]["x"]
    assert sum(counts) == 1 and counts[question.answer] == 1
    if built.reveal is not None:
        assert after["figure"] == json.loads(pio.to_json(built.reveal, validate=False))
    projector = payload(made.code, revealed, "projector")
    assert projector["figure"] != after["figure"]  # the projector's text sizes


def test_a_deck_not_on_this_server_is_a_reason_not_a_crash(store_url: str) -> None:
    with pytest.raises(SlideUnavailableError, match="'nosuch' is not on this server"):
        slide_payload("ABCDEF", ClassState("nosuch", 0), "screen")
