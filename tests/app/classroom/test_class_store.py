"""The class store's rules, the same for SQLite and for Redis (a real redis-server)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from attnlens.app.classroom.limits import ClassError, NotTeacherError, StoreUnavailableError
from attnlens.app.classroom.names import CODE, normal_code
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import open_store
from attnlens.app.teaching.questions import Question

QUESTION = Question("where", "?", ("a", "b", "c"), 1, "").to_dict()


def asking(state: ClassState, qid: str = "q1") -> ClassState:
    return state.moved(question=QUESTION, question_id=qid, revealed=None)


def test_a_class_is_created_with_a_code_and_moved_only_by_its_teacher(
    any_store: ClassStore,
) -> None:
    made = any_store.create(ClassState("section3", 0))
    assert CODE.match(made.code) and len(made.key) >= 20
    state = any_store.state(made.code)
    assert state is not None and state.slide == 0 and state.version == 0
    moved = any_store.update(made.code, made.key, state.moved(slide=3, view={"layer": 1}))
    assert moved.version == 1 and any_store.state(made.code).slide == 3  # type: ignore[union-attr]
    last = "B" if made.key.endswith("A") else "A"  # a key one letter off, never the key itself
    for wrong in (None, "", "x" * 24, made.key[:-1] + last):
        with pytest.raises(NotTeacherError):
            any_store.update(made.code, wrong, state.moved(slide=9))
    assert any_store.state(made.code).slide == 3  # type: ignore[union-attr]
    assert any_store.state(made.code.lower()) is not None  # typed in lower case, still found
    assert any_store.state("NOSUCH") is None and any_store.state("'; drop") is None


def test_students_join_with_nicknames_and_keep_them(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    first = any_store.join(made.code)
    again = any_store.join(made.code, first.id)
    assert again == first and " " in first.nickname
    others = {any_store.join(made.code).nickname for _ in range(20)}
    assert len(others) == 20 and first.nickname not in others  # unique within the class
    assert any_store.roster(made.code).joined == 21 and any_store.roster(made.code).active == 21
    with pytest.raises(ClassError, match="no class"):
        any_store.join("ZZZZZZ")


def test_answers_count_only_for_the_current_unrevealed_question(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    state = any_store.update(made.code, made.key, asking(any_store.state(made.code)))  # type: ignore[arg-type]
    students = [any_store.join(made.code) for _ in range(5)]
    for i, s in enumerate(students):
        assert any_store.answer(made.code, s.id, "q1", i % 3)
    assert any_store.answer(made.code, students[0].id, "q1", 2)  # a change of mind replaces
    assert not any_store.answer(made.code, students[1].id, "q1", 3)  # not an option
    assert not any_store.answer(made.code, students[1].id, "q1", -1)
    assert not any_store.answer(made.code, students[1].id, "old", 0)  # not the question on screen
    assert not any_store.answer(made.code, "A" * 16, "q1", 0)  # never joined
    assert any_store.counts(made.code, "q1", 3) == [1, 2, 2]
    assert any_store.answer_of(made.code, students[0].id, "q1") == 2
    any_store.update(made.code, made.key, state.moved(revealed="q1"))
    assert not any_store.answer(made.code, students[2].id, "q1", 0)  # revealed: answers are final
    assert any_store.counts(made.code, "q1", 3) == [1, 2, 2]


def test_many_students_answering_at_once_lose_nothing(any_store: ClassStore) -> None:
    made = any_store.create(ClassState("section3", 0))
    any_store.update(made.code, made.key, asking(any_store.state(made.code)))  # type: ignore[arg-type]
    students = [any_store.join(made.code) for _ in range(40)]

    def answer(chunk: list) -> None:  # type: ignore[type-arg]
        for s in chunk:
            assert any_store.answer(made.code, s.id, "q1", 1)

    threads = [threading.Thread(target=answer, args=(students[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert any_store.counts(made.code, "q1", 3) == [0, 40, 0]


def test_a_sqlite_store_reopened_after_a_restart_keeps_every_answer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'classes.sqlite3'}"
    first = open_store(url)
    made = first.create(ClassState("section3", 0))
    first.update(made.code, made.key, asking(first.state(made.code)))  # type: ignore[arg-type]
    students = [first.join(made.code) for _ in range(5)]
    for s in students:
        first.answer(made.code, s.id, "q1", 0)
    first.close()  # the server stops
    second = open_store(url)
    assert second.counts(made.code, "q1", 3) == [5, 0, 0]
    assert second.join(made.code, students[0].id) == students[0]
    assert second.is_teacher(made.code, made.key)


def test_store_urls_are_checked(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError, match=re.escape("sqlite:///PATH")):
        open_store("postgres://x")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(StoreUnavailableError, match="cannot open"):
        open_store(f"sqlite:///{tmp_path / 'a-file' / 'below' / 'it.sqlite3'}")
    unreachable = open_store("redis://127.0.0.1:9/0")  # nothing listens on port 9
    with pytest.raises(StoreUnavailableError, match=re.escape("redis://127.0.0.1:9/0")):
        unreachable.ping()


def test_codes_are_read_as_people_type_them() -> None:
    assert normal_code(" abc-def ") == "ABCDEF" and normal_code("ABC") == ""
    assert normal_code("ABCDE1") == ""  # 1 is never in a code


def test_a_sqlite_store_another_process_keeps_busy_says_so(tmp_path: Path) -> None:
    """Another connection holding the write lock past the wait: a StoreUnavailableError naming
    the store, which a page shows as a message (it was sqlite3's own error, a traceback)."""
    import sqlite3

    from attnlens.app.classroom.sqlite_store import SQLiteStore

    path = tmp_path / "c.sqlite3"
    store = SQLiteStore(path, busy_seconds=0.2)
    made = store.create(ClassState("section3", 0))
    student = store.join(made.code)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreUnavailableError, match=r"class store sqlite:///.*locked"):
            store.seen(made.code, student.id)
        state = store.state(made.code)  # reading goes on beside a writer (write-ahead log)
        assert state is not None and state.slide == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.seen(made.code, student.id)  # and writing once it is done
    store.close()


def test_a_store_file_written_before_joins_were_limited_opens_with_its_classes(
    tmp_path: Path,
) -> None:
    """A file with the first schema (no address, browser or removed column) gains the columns
    and keeps its class, its students (their unsigned ids) and their answers."""
    import json
    import sqlite3

    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE classes (code TEXT PRIMARY KEY, teacher TEXT NOT NULL, created REAL NOT "
        "NULL, state TEXT NOT NULL, version INTEGER NOT NULL);"
        "CREATE TABLE students (code TEXT NOT NULL, id TEXT NOT NULL, nickname TEXT NOT NULL, "
        "joined REAL NOT NULL, seen REAL NOT NULL, PRIMARY KEY (code, id));"
        "CREATE TABLE answers (code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT "
        "NULL, choice INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY (code, question, student));"
    )
    state = {**json.loads(asking(ClassState("section3", 2)).to_json()), "updated": time.time()}
    for k in ("size", "per_address", "locked"):
        state.pop(k)  # not in a state of then
    db.execute("INSERT INTO classes VALUES ('ABCDEF', ?, 0, ?, 3)", ("0" * 64, json.dumps(state)))
    db.execute("INSERT INTO students VALUES ('ABCDEF', ?, 'Calm Owl', 0, 0)", ("S" * 16,))
    db.execute("INSERT INTO answers VALUES ('ABCDEF', 'q1', ?, 2, 0)", ("S" * 16,))
    db.commit()
    db.close()
    store = open_store(f"sqlite:///{path}")
    assert store.state("ABCDEF").size == 1000  # type: ignore[union-attr]
    assert store.join("ABCDEF", "S" * 16).nickname == "Calm Owl"  # known: an id of then
    assert store.counts("ABCDEF", "q1", 3) == [0, 0, 1] and store.roster("ABCDEF").joined == 1
    assert store.join("ABCDEF").id != "S" * 16 and not store.notices()
