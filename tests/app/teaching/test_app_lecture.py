"""The Lecture page under AppTest: a URL per slide, next and previous, the reveal, the step
buttons, a teacher's bad deck, leaving for Explore (a class on it: tests/app/classroom/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from helpers.apptest import APP_SCRIPT, no_errors, open_lecture, require_bundled, slide_counter

DECK = "section3"


def test_a_link_opens_its_slide_and_the_buttons_move_the_link() -> None:
    at = open_lecture(deck=DECK, slide="4")
    no_errors(at)
    assert slide_counter(at) == "4 / 15" and at.title[0].value == "Scaled dot-product attention"
    assert len(at.get("plotly_chart")) == 1
    at.button(key="lec_next").click().run()
    assert slide_counter(at) == "5 / 15" and at.query_params["slide"] == "5"
    at.button(key="lec_pageup").click().run()  # what a clicker's "back" sends
    at.button(key="lec_prev").click().run()
    assert slide_counter(at) == "3 / 15" and at.query_params["slide"] == "3"
    first = open_lecture(deck=DECK, slide="1")
    assert first.button(key="lec_prev").disabled


def test_a_bad_deck_or_slide_in_a_link_gets_a_message_and_the_start() -> None:
    at = open_lecture(deck="nosuch", slide="99")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "No deck is named" in warnings and "section3" in warnings
    assert "which has slides 1 to 15" in warnings and slide_counter(at) == "1 / 15"


def test_an_old_lessons_link_opens_the_matching_slide() -> None:
    require_bundled("translate")
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": "lessons", "lesson": "masks", "model": "translate"})
    at.run()
    no_errors(at)
    assert at.title[0].value == "The causal mask, token by token"


def test_predict_then_reveal_alone() -> None:
    at = open_lecture(deck=DECK, slide="10")  # encoder-decoder attention, a "where" question
    no_errors(at)
    guess = at.radio[0]
    assert len(guess.options) == 4
    guess.set_value(0).run()
    at.button(key="lec_reveal").click().run()
    no_errors(at)
    said = [s.value for s in at.success] + [w.value for w in at.warning]
    assert said and any("Why:" in m.value for m in at.markdown)
    at.button(key="lec_hide").click().run()
    assert at.button(key="lec_reveal")


def test_the_step_buttons_walk_the_causal_mask() -> None:
    at = open_lecture(deck=DECK, slide="8")
    # on is ↓: the mask gains its rows downwards (↑ went on, and read as back)
    assert at.button(key="lec_step_on").proto.shortcut == "down"
    assert at.button(key="lec_step_back").proto.shortcut == "up"
    at.button(key="lec_step_on").click().run()
    no_errors(at)
    assert at.query_params["step"] == "2"


def test_a_bad_teachers_deck_is_named_without_its_path_or_text_and_the_others_still_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "broken.deck").write_text("=== One\nfigure: nosuch\n")
    (tmp_path / "shadow").write_text("root:$6$secret:19000:0:99999:7:::\n")
    (decks / "shadow.deck").symlink_to(tmp_path / "shadow")
    monkeypatch.setenv("ATTNLENS_DECKS", str(decks))
    from attnlens.app.web.lecture.resources import library

    library.clear()
    try:
        at = open_lecture(deck=DECK, slide="1")
        assert not at.exception
        shown = [t.value for t in at.text]
        assert "broken.deck: this deck cannot be opened" in shown
        assert "shadow.deck: this deck cannot be opened" in shown
        everything = " ".join(str(e.value) for kind in ("text", "markdown", "caption", "error")
                              for e in at.get(kind))  # fmt: skip
        assert str(tmp_path) not in everything and "$6$secret" not in everything
        assert "nosuch" not in everything  # the reason is for the terminal
    finally:
        library.clear()


def test_leaving_the_lecture_opens_explore_on_the_slide_in_the_same_tab() -> None:
    """The lecture hides the sidebar for the projector: without this button the only way to
    another page was the browser's Back."""
    at = open_lecture(deck=DECK, slide="4")
    no_errors(at)
    at.button(key="lec_leave").click().run()
    no_errors(at)
    assert at.title[0].value == "Explore"
    assert at.query_params["model"] == "translate" and at.query_params["page"] == "explore"
    assert at.query_params["kind"] == "encoder_self"  # slide 4's attention, layer and head
    assert [at.query_params["layer"], at.query_params["head"]] == ["0", "3"]
