"""A class on the Lecture page under AppTest: a teacher and students sharing one store, the
teacher key as the only way to move it, a student stepping away and back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.classroom.stores import open_store
from helpers.apptest import no_errors, open_lecture, slide_counter

DECK = "section3"


def test_a_class_follows_its_teacher_and_only_the_teacher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A following student's page is the toggle and the component that draws the slide in the
    browser (the slide itself: tests/app/classroom/test_slide_payload.py, test_follow_component.py
    and tests/app/test_browser_class.py): no slide, no buttons drawn by the page's script, so a
    move of the teacher needs no rerun of it."""
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", url)
    teacher = open_lecture(deck=DECK, slide="9")
    teacher.button(key="lec_start").click().run()
    code = teacher.query_params["class"]
    assert "key" not in teacher.query_params  # the key moves nothing from the address (issue 49)
    key = teacher.session_state["_lec_teacher"][code]
    student = open_lecture(**{"class": code})
    no_errors(student)
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
    forged = open_lecture(**{"class": code, "key": key[:-2] + "xx"})  # not the teacher: a student
    assert not _has(forged, "lec_next") and not _has(forged, "lec_reveal")
    assert following(forged)["code"] == code
    teacher.button(key="lec_reveal").click().run()
    assert store.state(code).revealed == state.question_id  # type: ignore[union-attr]
    projected = open_lecture(**{"class": code, "me": student.query_params["me"], "present": "1"})
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
    teacher = open_lecture(deck=DECK, slide="2")
    teacher.button(key="lec_start").click().run()
    student = open_lecture(**{"class": teacher.query_params["class"]})
    assert not _has(student, "stu_next") and following(student)
    teacher.button(key="lec_next").click().run()  # the student's page does not rerun for it
    student.toggle(key="lec_follow").set_value(False).run()
    no_errors(student)
    assert slide_counter(student) == "3 / 15"  # stepped away from where the teacher is now
    student.button(key="stu_next").click().run()
    student.button(key="stu_next").click().run()
    no_errors(student)
    assert slide_counter(student) == "5 / 15"  # on their own
    assert slide_counter(teacher.run()) == "3 / 15"  # the class did not move
    student.toggle(key="lec_follow").set_value(True).run()
    assert following(student) and not _has(student, "stu_next")
    assert not any(" / " in m.value for m in student.markdown)  # no slide of their own
