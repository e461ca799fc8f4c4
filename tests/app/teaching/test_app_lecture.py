"""The Lecture page under AppTest: a URL per slide, next and previous, the reveal, a class of a
teacher and students sharing one store, and the teacher key as the only way to move it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.teaching.class_store import open_store
from helpers.apptest import APP_SCRIPT, require_bundled

DECK = "section3"


def lecture(**params: str) -> AppTest:
    """The lecture page run once (translate, the deck's model, is bundled)."""
    require_bundled("translate")
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": "lecture", **params})
    return at.run()


def counter(at: AppTest) -> str:
    """The "4 / 14" in the corner."""
    return next(m.value for m in at.markdown if " / " in m.value and m.value[0].isdigit())


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_a_link_opens_its_slide_and_the_buttons_move_the_link() -> None:
    at = lecture(deck=DECK, slide="4")
    clean(at)
    assert counter(at) == "4 / 14" and at.title[0].value == "Scaled dot-product attention"
    assert len(at.get("plotly_chart")) == 1
    at.button(key="lec_next").click().run()
    assert counter(at) == "5 / 14" and at.query_params["slide"] == "5"
    at.button(key="lec_pageup").click().run()  # what a clicker's "back" sends
    at.button(key="lec_prev").click().run()
    assert counter(at) == "3 / 14" and at.query_params["slide"] == "3"
    first = lecture(deck=DECK, slide="1")
    assert first.button(key="lec_prev").disabled


def test_a_bad_deck_or_slide_in_a_link_gets_a_message_and_the_start() -> None:
    at = lecture(deck="nosuch", slide="99")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "No deck is named" in warnings and "section3" in warnings
    assert "which has slides 1 to 14" in warnings and counter(at) == "1 / 14"


def test_an_old_lessons_link_opens_the_matching_slide() -> None:
    require_bundled("translate")
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": "lessons", "lesson": "masks", "model": "translate"})
    at.run()
    clean(at)
    assert at.title[0].value == "The causal mask, token by token"


def test_predict_then_reveal_alone() -> None:
    at = lecture(deck=DECK, slide="10")  # encoder-decoder attention, a "where" question
    clean(at)
    guess = at.radio[0]
    assert len(guess.options) == 4
    guess.set_value(0).run()
    at.button(key="lec_reveal").click().run()
    clean(at)
    said = [s.value for s in at.success] + [w.value for w in at.warning]
    assert said and any("Why:" in m.value for m in at.markdown)
    at.button(key="lec_hide").click().run()
    assert at.button(key="lec_reveal")


def test_the_step_buttons_walk_the_causal_mask() -> None:
    at = lecture(deck=DECK, slide="8")
    # on is ↓: the mask gains its rows downwards (↑ went on, and read as back)
    assert at.button(key="lec_step_on").proto.shortcut == "down"
    assert at.button(key="lec_step_back").proto.shortcut == "up"
    at.button(key="lec_step_on").click().run()
    clean(at)
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
        at = lecture(deck=DECK, slide="1")
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


def test_a_class_follows_its_teacher_and_only_the_teacher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A following student's page is the toggle and the component that draws the slide in the
    browser (the slide itself: tests/app/teaching/test_slide_payload.py, test_follow_component.py
    and tests/app/test_browser_class.py): no slide, no buttons drawn by the page's script, so a
    move of the teacher needs no rerun of it."""
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", url)
    teacher = lecture(deck=DECK, slide="9")
    teacher.button(key="lec_start").click().run()
    code, key = teacher.query_params["class"], teacher.query_params["key"]
    student = lecture(**{"class": code})
    clean(student)
    store = open_store(url)
    drawn = following(student)
    assert drawn["code"] == code and drawn["student"] == student.query_params["me"]
    assert drawn["version"] == store.state(code).version  # type: ignore[union-attr]
    assert drawn["nickname"] == store.members(code)[0].nickname and drawn["present"] is False
    assert not student.button and not student.get("plotly_chart")  # the browser draws them
    teacher.button(key="lec_next").click().run()  # slide 10 asks a question
    state = store.state(code)
    assert state is not None and state.slide == 9 and state.question_id is not None
    assert following(student.run())["version"] == state.version  # a reload: the new version
    forged = lecture(**{"class": code, "key": key[:-2] + "xx"})  # not the teacher: a student
    assert not _has(forged, "lec_next") and not _has(forged, "lec_reveal")
    assert following(forged)["code"] == code
    teacher.button(key="lec_reveal").click().run()
    assert store.state(code).revealed == state.question_id  # type: ignore[union-attr]
    projected = lecture(**{"class": code, "me": student.query_params["me"], "present": "1"})
    assert following(projected)["present"] is True


def following(at: AppTest) -> dict[str, Any]:
    """The arguments of the component that draws a following student's slide."""
    drawn = [c for c in at.get("component_instance") if c.key == "lec_follow_signal"]
    assert len(drawn) == 1, "the student's page draws no follow component"
    args: dict[str, Any] = json.loads(drawn[0].proto.json_args)
    return args


def _has(at: AppTest, key: str) -> bool:
    return any(getattr(b, "key", None) == key for b in at.button)


def test_a_student_can_step_away_and_rejoin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", f"sqlite:///{tmp_path / 'classes.sqlite3'}")
    teacher = lecture(deck=DECK, slide="2")
    teacher.button(key="lec_start").click().run()
    student = lecture(**{"class": teacher.query_params["class"]})
    assert not _has(student, "stu_next") and following(student)
    teacher.button(key="lec_next").click().run()  # the student's page does not rerun for it
    student.toggle(key="lec_follow").set_value(False).run()
    clean(student)
    assert counter(student) == "3 / 14"  # stepped away from where the teacher is now
    student.button(key="stu_next").click().run()
    student.button(key="stu_next").click().run()
    clean(student)
    assert counter(student) == "5 / 14"  # on their own
    assert counter(teacher.run()) == "3 / 14"  # the class did not move
    student.toggle(key="lec_follow").set_value(True).run()
    assert following(student) and not _has(student, "stu_next")
    assert not any(" / " in m.value for m in student.markdown)  # no slide of their own


def test_leaving_the_lecture_opens_explore_on_the_slide_in_the_same_tab() -> None:
    """The lecture hides the sidebar for the projector: without this button the only way to
    another page was the browser's Back."""
    at = lecture(deck=DECK, slide="4")
    clean(at)
    at.button(key="lec_leave").click().run()
    clean(at)
    assert at.title[0].value == "Explore"
    assert at.query_params["model"] == "translate" and at.query_params["page"] == "explore"
    assert at.query_params["kind"] == "encoder_self"  # slide 4's attention, layer and head
    assert [at.query_params["layer"], at.query_params["head"]] == ["0", "3"]
