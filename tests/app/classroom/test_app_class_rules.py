"""The class's rules on the Lecture page (AppTest): a made-up student link refused, the teacher's
size, lock and removal, what one address joined, and words for the right reader: students never
see the store's address, teachers never get the students' "check it with your teacher"."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.classroom.limits import AWAY, PER_BROWSER
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.stores import open_store
from attnlens.app.web.lecture.resources import this_store
from attnlens.app.web.safe_text import md
from helpers.apptest import open_lecture


def plain(markdown: str) -> str:
    """Text as a reader sees it: md()'s escapes and word joiners gone."""
    return markdown.replace("\\", "").replace("\u2060", "")


def errors(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    return " ".join(plain(e.value) for e in at.error)


def following(at: AppTest) -> bool:
    """Whether the page is a student's following the class (the component that draws the
    slide, its answer buttons included, in the browser)."""
    return any(c.key == "lec_follow_signal" for c in at.get("component_instance"))


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", url)
    return url


def test_a_made_up_student_link_is_refused(store_url: str) -> None:
    teacher = open_lecture(deck="section3", slide="10")  # a slide that asks a question
    teacher.button(key="lec_start").click().run()
    code = teacher.query_params["class"]
    forged = open_lecture(**{"class": code, "me": "A" * 23})  # the right shape, never given out
    assert "was not given out by this class" in errors(forged) and not following(forged)
    assert open_store(store_url).roster(code).joined == 0  # it joined as a new student before
    forged.button(key="lec_join_new").click().run()  # the way on: a new student, a new id
    assert not errors(forged) and following(forged) and forged.query_params["me"] != "A" * 23
    assert open_store(store_url).roster(code).joined == 1


def test_the_teacher_sizes_locks_and_removes_and_sees_one_address(store_url: str) -> None:
    teacher = open_lecture(deck="section3", slide="10")
    teacher.button(key="lec_start").click().run()
    code = teacher.query_params["class"]
    first, second = open_lecture(**{"class": code}), open_lecture(**{"class": code})
    bar = teacher.run().markdown
    assert any("2 joined · 2 from one address" in m.value for m in bar)
    teacher.number_input[0].set_value(2)  # students at most
    next(b for b in teacher.button if b.label == "Save").click().run()
    assert open_store(store_url).state(code).size == 2  # type: ignore[union-attr]
    full = open_lecture(**{"class": code})
    assert "this class is full (2 students; its teacher set 2)" in errors(full)
    me = first.query_params["me"]
    teacher.selectbox(key="lec_remove_who").set_value(me).run()
    teacher.button(key="lec_remove").click().run()
    assert "the teacher removed this student from the class" in errors(first.run())
    assert not errors(second.run()) and following(second)
    teacher.toggle[0].set_value(True)  # lock joining
    next(b for b in teacher.button if b.label == "Save").click().run()
    assert "closed this class to new students" in errors(open_lecture(**{"class": code}))


def test_the_teacher_is_told_when_the_store_lost_its_file(store_url: str, tmp_path: Path) -> None:
    teacher = open_lecture(deck="section3", slide="10")
    teacher.button(key="lec_start").click().run()
    code = teacher.query_params["class"]
    student = open_lecture(**{"class": code})
    state = open_store(store_url).state(code)
    assert state is not None and state.question_id is not None
    # as the answer route takes it: through the store the pages of the process share
    assert this_store().answer(code, student.query_params["me"], state.question_id, 1)
    (tmp_path / "classes.sqlite3").unlink()
    teacher.run()
    assert not errors(teacher)
    told = " ".join(plain(w.value) for w in teacher.warning)
    # this page's store finds the file gone, or, when the process's board (which reads the
    # class every 0.1 s through its own connection) rebuilt it first, another file in its place
    assert "was deleted" in told or "was replaced by another file" in told, told
    assert "1 answer(s)" in told
    assert any(m.value.startswith("**1** answered") for m in teacher.markdown)


def test_a_teachers_link_to_a_class_the_store_lost_speaks_to_the_teacher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = open_store(f"sqlite:///{tmp_path / 'gone.sqlite3'}").create(ClassState("section3", 0))
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", f"sqlite:///{tmp_path / 'new.sqlite3'}")
    at = open_lecture(**{"class": made.code, "key": made.key})
    shown = errors(at)
    assert f"No class has the code {made.code} any more" in shown
    assert "check it with your teacher" not in shown  # what its students are told


def test_students_never_see_the_store_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "redis://127.0.0.1:9/0")  # nothing listens
    student = open_lecture(**{"class": "ABCDEF"})
    assert errors(student) == plain(md(AWAY))
    teacher = open_lecture(**{"class": "ABCDEF", "key": "k" * 24})  # the teacher gets the detail
    assert "redis://127.0.0.1:9/0" in errors(teacher)


def test_one_client_opening_session_after_session_is_stopped(store_url: str) -> None:
    """What a script holding only the join link did (996 students from one client): every
    session of one client past PER_BROWSER is refused, with the limit in words."""
    teacher = open_lecture(deck="section3", slide="2")
    teacher.button(key="lec_start").click().run()
    code = teacher.query_params["class"]
    sessions = [open_lecture(**{"class": code}) for _ in range(PER_BROWSER + 2)]
    refused = [errors(at) for at in sessions[PER_BROWSER:]]
    assert all(f"this browser has joined this class {PER_BROWSER} times" in e for e in refused)
    assert not any(errors(at) for at in sessions[:PER_BROWSER])
    assert open_store(store_url).roster(code).joined == PER_BROWSER
