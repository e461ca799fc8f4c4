"""An answer acknowledged is an answer counted, whatever happens to the store underneath: a SQLite
file deleted, replaced or overwritten mid-class, a damaged file at start-up, a Redis killed (-9)
and restarted with or without its append-only file. Real files and a real redis-server."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from attnlens.app.classroom import sqlite_file, sqlite_store
from attnlens.app.classroom.limits import AWAY, StoreUnavailableError
from attnlens.app.classroom.state import ClassState, Created
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import open_store
from helpers.redis_server import MISSING, REDIS_SERVER, RedisServer

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason=MISSING)


QUESTION = {"ask": "where", "prompt": "?", "options": ["a", "b", "c"], "answer": 1, "why": ""}


def asking(state: ClassState) -> ClassState:
    return state.moved(question=QUESTION, question_id="q1", revealed=None)


class Lesson:
    """A class asking one question of three options, and what the store acknowledged."""

    def __init__(self, store: ClassStore) -> None:
        self.store = store
        self.made: Created = store.create(ClassState("section3", 0))
        state = store.state(self.made.code)
        assert state is not None
        store.update(self.made.code, self.made.key, asking(state))
        self.acknowledged: dict[str, int] = {}  # student -> the choice the store said it counted

    def join(self, n: int) -> list[str]:
        return [self.store.join(self.made.code).id for _ in range(n)]

    def answer(self, students: list[str], choice: int) -> None:
        for student in students:
            if self.store.answer(self.made.code, student, "q1", choice):
                self.acknowledged[student] = choice

    def expected(self) -> list[int]:
        return [sum(1 for c in self.acknowledged.values() if c == i) for i in range(3)]


def test_a_deleted_sqlite_file_is_noticed_and_loses_no_acknowledged_answer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "classes.sqlite3"
    lesson = Lesson(open_store(f"sqlite:///{path}"))
    first = lesson.join(20)
    lesson.answer(first, 0)
    path.unlink()  # mid-class
    lesson.answer(first, 1)  # 20 change their minds
    late = lesson.join(5)  # and 5 join
    lesson.answer(late, 2)
    assert len(lesson.acknowledged) == 25 and lesson.expected() == [0, 20, 5]
    lesson.store.close()
    again = open_store(f"sqlite:///{path}")  # the server restarts
    assert again.counts(lesson.made.code, "q1", 3) == [0, 20, 5]  # it was: no such class
    assert again.is_teacher(lesson.made.code, lesson.made.key)
    assert again.join(lesson.made.code, late[0]).id == late[0]
    (notice,) = lesson.store.notices()  # the teacher was told
    assert f"{path} was deleted" in notice and "nothing it had acknowledged is lost" in notice


def test_pages_reading_while_the_file_is_rebuilt_never_see_a_closed_descriptor(
    tmp_path: Path,
) -> None:
    """A page's check of the file read the descriptor a rebuild had just closed: "class store
    …: Bad file descriptor" on the teacher's page (the store now checks under its lock)."""
    path = tmp_path / "classes.sqlite3"
    lesson = Lesson(open_store(f"sqlite:///{path}"))
    students = lesson.join(3)
    errors: list[str] = []
    done = threading.Event()

    def page() -> None:  # another session's reads, as the board makes every 0.1 s
        while not done.is_set():
            try:
                lesson.store.state(lesson.made.code)
            except StoreUnavailableError as err:
                errors.append(str(err))

    readers = [threading.Thread(target=page) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for choice in range(40):
            path.unlink()  # each answer after it rebuilds the file: a new connection
            lesson.answer(students, choice % 3)
    finally:
        done.set()
        for reader in readers:
            reader.join()
    assert errors == [] and lesson.expected()[39 % 3] == 3


def test_an_answer_during_another_threads_rebuild_waits_for_it_and_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's read rebuilds a deleted file; an answer arriving after the new file is open and
    before the class is written back into it was refused (the test above saw it at load 20)."""
    path = tmp_path / "classes.sqlite3"
    lesson = Lesson(open_store(f"sqlite:///{path}"))
    students = lesson.join(1)
    lesson.answer(students, 0)
    store, code = lesson.store, lesson.made.code
    opened, go, refused_once = threading.Event(), threading.Event(), threading.Event()
    put_back, answer = store._put_back, store._answer  # type: ignore[attr-defined]

    def held_put_back(*args: Any) -> None:  # the rebuild waits with the new file open
        opened.set()
        assert go.wait(60)
        put_back(*args)

    def first_answer(*args: Any) -> bool:
        stored = bool(answer(*args))
        if not stored:
            refused_once.set()
        return stored

    monkeypatch.setattr(store, "_put_back", held_put_back)
    monkeypatch.setattr(store, "_answer", first_answer)
    path.unlink()
    page = threading.Thread(target=store.state, args=(code,))
    page.start()
    assert opened.wait(60)
    answered: list[bool] = []
    student = threading.Thread(
        target=lambda: answered.append(store.answer(code, students[0], "q1", 2))
    )
    student.start()
    assert refused_once.wait(60)  # the class is not back yet: the first try finds nothing
    go.set()
    page.join(60)
    student.join(60)
    assert answered == [True] and store.counts(code, "q1", 3) == [0, 0, 1]


def test_the_file_is_checked_under_the_lock_a_rebuild_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race above, made certain: the descriptor is read only while no rebuild can close it."""
    store = open_store(f"sqlite:///{tmp_path / 'classes.sqlite3'}")
    held: list[bool] = []

    def identity(path: Path, file: int) -> tuple[int, int, bytes]:
        held.append(store._lock.locked())  # type: ignore[attr-defined]
        return sqlite_file.identity(path, file)

    monkeypatch.setattr(sqlite_store, "identity", identity)
    assert store._check() is None and held == [True]


def test_an_overwritten_sqlite_file_is_moved_aside_and_rebuilt_from_the_servers_copy(
    tmp_path: Path,
) -> None:
    path = tmp_path / "classes.sqlite3"
    lesson = Lesson(open_store(f"sqlite:///{path}"))
    students = lesson.join(20)
    lesson.answer(students[:10], 0)
    checkpoint = sqlite3.connect(path)  # the log written into the file, as SQLite does itself
    checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every 1000 pages
    checkpoint.close()
    path.write_bytes(os.urandom(3000))  # garbage in the file (the same inode, cut short)
    lesson.answer(students[10:], 1)
    assert lesson.expected() == [10, 10, 0]
    assert lesson.store.counts(lesson.made.code, "q1", 3) == [10, 10, 0]
    lesson.store.close()
    again = open_store(f"sqlite:///{path}")  # it was: a server that would not start
    assert again.counts(lesson.made.code, "q1", 3) == [10, 10, 0]
    (notice,) = lesson.store.notices()
    assert "was overwritten" in notice and "kept as classes.sqlite3.damaged-" in notice
    assert len(list(tmp_path.glob("classes.sqlite3.damaged-*"))) == 1


def test_a_sqlite_file_replaced_by_another_store_gets_the_class_written_into_it(
    tmp_path: Path,
) -> None:
    """A sound store moved over ours (a backup put back, another server's rebuild) is kept, and
    what it lacks of ours is written into it: both classes are there."""
    path = tmp_path / "classes.sqlite3"
    lesson = Lesson(open_store(f"sqlite:///{path}"))
    students = lesson.join(4)
    lesson.answer(students, 2)
    other = open_store(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    theirs = other.create(ClassState("section3", 5)).code
    other.close()
    os.replace(tmp_path / "other.sqlite3", path)
    lesson.answer(students[:1], 0)
    assert lesson.store.counts(lesson.made.code, "q1", 3) == [1, 0, 3]
    lesson.store.close()
    again = open_store(f"sqlite:///{path}")
    assert again.counts(lesson.made.code, "q1", 3) == [1, 0, 3]  # it was: no such class
    assert again.state(theirs) is not None and again.state(theirs).slide == 5  # type: ignore[union-attr]
    assert "was replaced by another file" in lesson.store.notices()[0]
    assert not list(tmp_path.glob("*.damaged-*"))


def test_a_backup_put_back_under_the_server_keeps_the_answers_given_since(
    tmp_path: Path,
) -> None:
    """An older copy of the file moved over it (a backup put back by hand): the store keeps it
    and writes into it what it holds newer: every student's later answer, not the backup's.
    Writing back only what the file lacked, it counted the backup's [4, 0, 0]."""
    path = tmp_path / "classes.sqlite3"
    lesson = Lesson(open_store(f"sqlite:///{path}"))
    students = lesson.join(4)
    lesson.answer(students, 0)
    with sqlite3.connect(path) as db, sqlite3.connect(tmp_path / "backup.sqlite3") as backup:
        db.backup(backup)
    lesson.answer(students, 2)  # they change their minds after the backup
    os.replace(tmp_path / "backup.sqlite3", path)
    assert lesson.store.counts(lesson.made.code, "q1", 3) == [0, 0, 4]
    lesson.store.close()
    assert open_store(f"sqlite:///{path}").counts(lesson.made.code, "q1", 3) == [0, 0, 4]


def test_a_damaged_file_at_start_up_is_moved_aside_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "classes.sqlite3"
    path.write_bytes(b"not a database at all\n" * 200)
    store = open_store(f"sqlite:///{path}")  # it was: StoreUnavailableError, no server
    made = store.create(ClassState("section3", 0))
    (aside,) = tmp_path.glob("classes.sqlite3.damaged-*")
    assert aside.read_bytes().startswith(b"not a database at all")
    (notice,) = store.notices()
    assert f"the file {path} was not a readable class store" in notice and aside.name in notice
    store.close()
    again = open_store(f"sqlite:///{path}")  # `attnlens serve` checks, then the app opens it
    assert again.notices() == [notice] and again.state(made.code) is not None


@needs_redis
def test_redis_killed_and_restarted_with_its_append_only_file_counts_every_answer(
    tmp_path: Path,
) -> None:
    redis = RedisServer(tmp_path, persist=True)
    redis.start()
    try:
        lesson = Lesson(open_store(redis.url))
        students = lesson.join(20)
        lesson.answer(students, 1)
        before = sum(lesson.expected())
        redis.kill()
        with pytest.raises(StoreUnavailableError) as away:  # during the outage
            lesson.store.answer(lesson.made.code, students[0], "q1", 0)
        assert away.value.for_students == AWAY and "127.0.0.1" not in AWAY
        redis.start()
        fresh = open_store(redis.url)  # a server that holds no copy: Redis kept it all
        assert fresh.counts(lesson.made.code, "q1", 3) == lesson.expected() == [0, 20, 0]
        lesson.answer(students[:5], 2)  # the class goes on
        assert fresh.counts(lesson.made.code, "q1", 3) == [0, 15, 5]
        assert not lesson.store.notices() and before == 20
    finally:
        redis.stop()


@needs_redis
def test_redis_restarted_empty_is_written_back_from_the_servers_copy(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path, persist=False)
    redis.start()
    try:
        lesson = Lesson(open_store(redis.url))
        students = lesson.join(20)
        lesson.answer(students, 1)
        lesson.store.remove(lesson.made.code, lesson.made.key, students[-1])
        redis.kill()
        redis.start()  # empty
        state = lesson.store.state(lesson.made.code)  # at once: a read finding nothing looks again
        assert state is not None and state.question_id == "q1"
        assert lesson.store.counts(lesson.made.code, "q1", 3) == [0, 19, 0]  # it was: 0
        fresh = open_store(redis.url)  # written back into Redis, not only kept here
        assert fresh.counts(lesson.made.code, "q1", 3) == [0, 19, 0]
        assert fresh.is_teacher(lesson.made.code, lesson.made.key)
        state = fresh.state(lesson.made.code)
        assert state is not None and state.question_id == "q1"
        assert fresh.join(lesson.made.code, students[0]).id == students[0]
        assert fresh.roster(lesson.made.code).joined == 19
        lesson.answer(students[:3], 0)
        assert fresh.counts(lesson.made.code, "q1", 3) == [3, 16, 0]
        told = lesson.store.notices()
        assert "appendonly is off" in told[0]  # told before anything was lost
        assert "Redis lost the class store's data" in told[1] and "19 student(s)" in told[1]
    finally:
        redis.stop()
