"""Who is in a class, the same for SQLite and for Redis (a real redis-server): student ids the
server signed, joins limited per browser and per address, the teacher's size, lock and removal.

On the code before these rules, a made-up `me=` of the right shape joined as a new student, and
one script holding the join link filled the class (996 students from one address)."""

from __future__ import annotations

import pytest

from attnlens.app.classroom.limits import PER_BROWSER, ClassError, NotTeacherError
from attnlens.app.classroom.names import client_key, new_student_id
from attnlens.app.classroom.state import ClassState, Client
from attnlens.app.classroom.store import ClassStore

QUESTION = {"ask": "where", "prompt": "?", "options": ["a", "b", "c"], "answer": 1, "why": ""}


def browser(address: str, cookie: str) -> Client:
    return Client(client_key(address), client_key(address, cookie))


def test_a_made_up_student_id_is_refused_and_an_issued_one_comes_back(
    any_store: ClassStore,
) -> None:
    made = any_store.create(ClassState("section3", 0))
    other = any_store.create(ClassState("section3", 0))
    me = any_store.join(made.code)
    assert any_store.join(made.code, me.id) == me  # a reload
    made_up = ["A" * 23, "A" * 16, me.id[:-1] + ("B" if me.id[-1] == "A" else "A"), "x"]
    for forged in [*made_up, any_store.join(other.code).id]:  # another class's id too
        with pytest.raises(ClassError, match=r"was not given out by this class"):
            any_store.join(made.code, forged)
    assert any_store.roster(made.code).joined == 1


def test_an_issued_id_the_store_lost_joins_again_under_its_own_name(any_store: ClassStore) -> None:
    """A signed id the any_store does not hold (it lost it) is the server's own: it joins again."""
    made = any_store.create(ClassState("section3", 0))
    teacher = any_store._teacher_hash(made.code)  # the server signs with it
    assert teacher is not None
    issued = new_student_id(made.code, teacher)
    assert any_store.join(made.code, issued).id == issued


def test_joins_are_limited_per_browser_and_per_address(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    one = browser("10.0.0.7", "cookie-1")
    for _ in range(PER_BROWSER):
        any_store.join(made.code, client=one)
    with pytest.raises(ClassError, match=f"this browser has joined this class {PER_BROWSER} "):
        any_store.join(made.code, client=one)
    state = any_store.configure(made.code, made.key, size=100, per_address=5, locked=False)
    assert state.per_address == 5
    any_store.join(made.code, client=browser("10.0.0.7", "cookie-2"))
    any_store.join(made.code, client=browser("10.0.0.7", "cookie-3"))
    with pytest.raises(ClassError, match=r"5 students have joined from your network address"):
        any_store.join(made.code, client=browser("10.0.0.7", "cookie-4"))
    any_store.join(made.code, client=browser("10.0.0.8", "cookie-1"))  # another address
    roster = any_store.roster(made.code)
    assert roster.joined == 6 and roster.from_one_address == 5


def test_the_teacher_sets_the_size_and_locks_joining(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    for wrong in (0, 1001):
        with pytest.raises(ClassError, match=f"class size {wrong} is not between 1 and 1000"):
            any_store.configure(made.code, made.key, size=wrong, per_address=50, locked=False)
    with pytest.raises(NotTeacherError):
        any_store.configure(made.code, None, size=2, per_address=50, locked=False)
    any_store.configure(made.code, made.key, size=2, per_address=50, locked=False)
    first = any_store.join(made.code)
    any_store.join(made.code)
    with pytest.raises(ClassError, match=r"this class is full \(2 students; its teacher set 2\)"):
        any_store.join(made.code)
    any_store.configure(made.code, made.key, size=10, per_address=50, locked=True)
    with pytest.raises(ClassError, match="closed this class to new students"):
        any_store.join(made.code)
    assert any_store.join(made.code, first.id) == first  # who joined comes back


def test_a_removed_student_stops_counting_and_cannot_come_back(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    state = any_store.state(made.code)
    assert state is not None
    any_store.update(made.code, made.key, state.moved(question=QUESTION, question_id="q1"))
    a, b = any_store.join(made.code, client=browser("1.1.1.1", "x")), any_store.join(made.code)
    assert any_store.answer(made.code, a.id, "q1", 0) and any_store.answer(made.code, b.id, "q1", 1)
    with pytest.raises(NotTeacherError):
        any_store.remove(made.code, "not the key", a.id)
    assert any_store.remove(made.code, made.key, a.id)
    assert any_store.counts(made.code, "q1", 3) == [0, 1, 0]
    assert [s.id for s in any_store.members(made.code)] == [b.id]
    assert any_store.roster(made.code).joined == 1
    assert not any_store.answer(made.code, a.id, "q1", 2)
    with pytest.raises(ClassError, match="the teacher removed this student"):
        any_store.join(made.code, a.id)
