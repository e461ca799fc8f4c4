"""Handing a class to another device of the teacher's (issue 49): a one-time code the teacher's
page shows, typed on the other device, gives that device a pass that moves the class as the key
does. The same rules on SQLite and on Redis (a real redis-server)."""

from __future__ import annotations

import pytest

from attnlens.app.classroom import store as store_module
from attnlens.app.classroom.limits import NotTeacherError
from attnlens.app.classroom.names import CODE_ALPHABET, ONCE_LENGTH
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore


def test_a_one_time_code_gives_a_pass_once(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    given = any_store.hand_over(made.code, made.key)
    assert len(given.once) == ONCE_LENGTH and set(given.once) <= set(CODE_ALPHABET)
    assert any_store.handed_over(made.code) is None
    typed = f"{given.once[:4].lower()}-{given.once[4:]}"  # as a person types it
    held = any_store.take_over(made.code, typed)
    assert held is not None and held != made.key
    assert any_store.is_teacher(made.code, held)  # the pass moves the class
    state = any_store.state(made.code)
    assert state is not None
    assert any_store.update(made.code, held, state.moved(slide=2)).slide == 2
    assert any_store.handed_over(made.code) is not None
    assert any_store.take_over(made.code, given.once) is None  # used up
    other = any_store.create(ClassState("section3", 0))
    assert not any_store.is_teacher(other.code, held)  # a pass is for its own class only
    token, _, signature = held.partition(".")
    forged = f"{token}.{'A' * len(signature)}"
    assert not any_store.is_teacher(made.code, forged)


def test_only_the_teacher_makes_a_code_and_a_new_one_replaces_the_old(
    any_store: ClassStore,
) -> None:
    made = any_store.create(ClassState("section3", 0))
    for wrong in (None, "", "x" * 24):
        with pytest.raises(NotTeacherError):
            any_store.hand_over(made.code, wrong)
    first = any_store.hand_over(made.code, made.key)
    second = any_store.hand_over(made.code, made.key)
    assert any_store.take_over(made.code, first.once) is None
    assert any_store.take_over(made.code, second.once) is not None
    assert any_store.take_over("ZZZZZZ", second.once) is None  # no such class
    assert any_store.take_over(made.code, "not a code at all") is None


def test_a_code_expires(any_store: ClassStore, monkeypatch: pytest.MonkeyPatch) -> None:
    made = any_store.create(ClassState("section3", 0))
    monkeypatch.setattr(store_module, "ONCE_SECONDS", -1.0)  # expired as it is made
    given = any_store.hand_over(made.code, made.key)
    assert any_store.take_over(made.code, given.once) is None


def test_wrong_tries_void_the_open_code(
    any_store: ClassStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script guessing at a class's code, from however many addresses, gets ONCE_WRONG tries
    at it in all; then the right code no longer works either (the teacher makes a new one)."""
    monkeypatch.setattr(store_module, "ONCE_WRONG", 3)
    made = any_store.create(ClassState("section3", 0))
    given = any_store.hand_over(made.code, made.key)
    wrong = "".join("B" if c == "A" else "A" for c in given.once)  # never the code itself
    assert any_store.take_over(made.code, wrong) is None
    assert any_store.take_over(made.code, wrong) is None
    right = any_store.take_over(made.code, given.once)  # two wrong tries: still open
    assert right is not None
    again = any_store.hand_over(made.code, made.key)
    for _ in range(3):
        assert any_store.take_over(made.code, wrong) is None
    assert any_store.take_over(made.code, again.once) is None  # void after 3 wrong tries


def test_a_student_who_left_is_not_counted_here(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    students = [any_store.join(made.code) for _ in range(3)]
    assert any_store.roster(made.code).active == 3
    any_store.left(made.code, students[0].id)
    assert any_store.roster(made.code).active == 2
    any_store.seen(made.code, students[0].id)  # the page came back
    assert any_store.roster(made.code).active == 3
