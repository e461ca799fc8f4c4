"""Who is in a class, the same for SQLite and for Redis (a real redis-server): student ids the
server signed, joins limited per browser and per address, the teacher's size, lock and removal.

On the code before these rules, a made-up `me=` of the right shape joined as a new student, and
one script holding the join link filled the class (996 students from one address)."""

from __future__ import annotations

import pytest

from attnlens.app.teaching.class_limits import PER_BROWSER, ClassError, NotTeacherError
from attnlens.app.teaching.class_state import ClassState, Client
from attnlens.app.teaching.class_store import ClassStore
from attnlens.app.teaching.names import client_key, new_student_id

QUESTION = {"ask": "where", "prompt": "?", "options": ["a", "b", "c"], "answer": 1, "why": ""}


def browser(address: str, cookie: str) -> Client:
    return Client(client_key(address), client_key(address, cookie))


def test_a_made_up_student_id_is_refused_and_an_issued_one_comes_back(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    other = store.create(ClassState("section3", 0))
    me = store.join(made.code)
    assert store.join(made.code, me.id) == me  # a reload
    made_up = ["A" * 23, "A" * 16, me.id[:-1] + ("B" if me.id[-1] == "A" else "A"), "x"]
    for forged in [*made_up, store.join(other.code).id]:  # another class's id too
        with pytest.raises(ClassError, match=r"was not given out by this class"):
            store.join(made.code, forged)
    assert store.roster(made.code).joined == 1


def test_an_issued_id_the_store_lost_joins_again_under_its_own_name(store: ClassStore) -> None:
    """A signed id the store does not hold (it lost it) is the server's own: it joins again."""
    made = store.create(ClassState("section3", 0))
    teacher = store._teacher_hash(made.code)  # the server signs with it
    assert teacher is not None
    issued = new_student_id(made.code, teacher)
    assert store.join(made.code, issued).id == issued


def test_joins_are_limited_per_browser_and_per_address(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    one = browser("10.0.0.7", "cookie-1")
    for _ in range(PER_BROWSER):
        store.join(made.code, client=one)
    with pytest.raises(ClassError, match=f"this browser has joined this class {PER_BROWSER} "):
        store.join(made.code, client=one)
    state = store.configure(made.code, made.key, size=100, per_address=5, locked=False)
    assert state.per_address == 5
    store.join(made.code, client=browser("10.0.0.7", "cookie-2"))
    store.join(made.code, client=browser("10.0.0.7", "cookie-3"))
    with pytest.raises(ClassError, match=r"5 students have joined from your network address"):
        store.join(made.code, client=browser("10.0.0.7", "cookie-4"))
    store.join(made.code, client=browser("10.0.0.8", "cookie-1"))  # another address
    roster = store.roster(made.code)
    assert roster.joined == 6 and roster.from_one_address == 5


def test_the_teacher_sets_the_size_and_locks_joining(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    for wrong in (0, 1001):
        with pytest.raises(ClassError, match=f"class size {wrong} is not between 1 and 1000"):
            store.configure(made.code, made.key, size=wrong, per_address=50, locked=False)
    with pytest.raises(NotTeacherError):
        store.configure(made.code, None, size=2, per_address=50, locked=False)
    store.configure(made.code, made.key, size=2, per_address=50, locked=False)
    first = store.join(made.code)
    store.join(made.code)
    with pytest.raises(ClassError, match=r"this class is full \(2 students; its teacher set 2\)"):
        store.join(made.code)
    store.configure(made.code, made.key, size=10, per_address=50, locked=True)
    with pytest.raises(ClassError, match="closed this class to new students"):
        store.join(made.code)
    assert store.join(made.code, first.id) == first  # who joined comes back


def test_a_removed_student_stops_counting_and_cannot_come_back(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    state = store.state(made.code)
    assert state is not None
    store.update(made.code, made.key, state.moved(question=QUESTION, question_id="q1"))
    a, b = store.join(made.code, client=browser("1.1.1.1", "x")), store.join(made.code)
    assert store.answer(made.code, a.id, "q1", 0) and store.answer(made.code, b.id, "q1", 1)
    with pytest.raises(NotTeacherError):
        store.remove(made.code, "not the key", a.id)
    assert store.remove(made.code, made.key, a.id)
    assert store.counts(made.code, "q1", 3) == [0, 1, 0]
    assert [s.id for s in store.members(made.code)] == [b.id]
    assert store.roster(made.code).joined == 1
    assert not store.answer(made.code, a.id, "q1", 2)
    with pytest.raises(ClassError, match="the teacher removed this student"):
        store.join(made.code, a.id)
