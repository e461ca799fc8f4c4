"""Classes in one SQLite file: every answer is committed before the student is told it counted,
so a server restart loses none (write-ahead log; a power cut may lose the last moments)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from attnlens.app.teaching.class_state import ClassState, Roster, Student
from attnlens.app.teaching.class_store import (
    ACTIVE_SECONDS,
    KEEP_SECONDS,
    MAX_STUDENTS,
    ClassError,
    ClassStore,
    StoreUnavailableError,
)
from attnlens.app.teaching.names import new_student_id, nickname

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, teacher TEXT NOT NULL, created REAL NOT NULL,
    state TEXT NOT NULL, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL, id TEXT NOT NULL, nickname TEXT NOT NULL, joined REAL NOT NULL,
    seen REAL NOT NULL, PRIMARY KEY (code, id));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL, choice INTEGER NOT NULL,
    at REAL NOT NULL, PRIMARY KEY (code, question, student));
"""


class SQLiteStore(ClassStore):
    """One connection, used under a lock: SQLite writes one at a time anyway, and a class's
    reads take microseconds."""

    def __init__(self, path: Path, busy_seconds: float = 10.0) -> None:
        self.url = f"sqlite:///{path}"
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=busy_seconds
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            self._forget_old(time.time())
        except (OSError, sqlite3.Error) as err:
            raise StoreUnavailableError(f"class store {path}: cannot open it ({err})") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The connection, one caller at a time. A database error (another process writing for
        longer than busy_seconds, the file gone or unreadable) becomes a StoreUnavailableError
        naming the store, as the Redis store's do: a page shows it as a message."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as err:
                raise StoreUnavailableError(f"class store {self.url}: {err}") from None

    def _forget_old(self, now: float) -> None:
        old = [
            row[0]
            for row in self._db.execute(
                "SELECT code FROM classes WHERE json_extract(state, '$.updated') < ?",
                (now - KEEP_SECONDS,),
            )
        ]
        for table in ("answers", "students", "classes"):
            self._db.executemany(f"DELETE FROM {table} WHERE code = ?", [(c,) for c in old])

    def ping(self) -> None:
        with self._locked():
            self._db.execute("SELECT 1")

    def close(self) -> None:
        with self._locked():
            self._db.close()

    def _insert(self, code: str, teacher: str, state: ClassState) -> bool:
        with self._locked():
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO classes VALUES (?, ?, ?, ?, 0)",
                (code, teacher, time.time(), state.to_json()),
            )
            return cursor.rowcount == 1

    def _state(self, code: str) -> ClassState | None:
        with self._locked():
            row = self._db.execute(
                "SELECT state, version FROM classes WHERE code = ?", (code,)
            ).fetchone()
        return None if row is None else ClassState.from_json(row[0], int(row[1]))

    def _teacher_hash(self, code: str) -> str | None:
        with self._locked():
            row = self._db.execute("SELECT teacher FROM classes WHERE code = ?", (code,)).fetchone()
        return None if row is None else str(row[0])

    def _update(self, code: str, state: ClassState) -> ClassState:
        with self._locked():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "UPDATE classes SET state = ?, version = version + 1 WHERE code = ?",
                    (state.to_json(), code),
                )
                version = self._db.execute(
                    "SELECT version FROM classes WHERE code = ?", (code,)
                ).fetchone()[0]
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return state.moved(version=int(version))

    def _join(self, code: str, student: str | None, now: float) -> Student:
        with self._locked():
            if student is not None:
                row = self._db.execute(
                    "SELECT nickname FROM students WHERE code = ? AND id = ?", (code, student)
                ).fetchone()
                if row is not None:
                    return Student(student, str(row[0]))
            taken = {
                r[0]
                for r in self._db.execute("SELECT nickname FROM students WHERE code = ?", (code,))
            }
            if len(taken) >= MAX_STUDENTS:
                raise ClassError(f"this class is full ({MAX_STUDENTS} students)")
            new = Student(student or new_student_id(), nickname(taken))
            self._db.execute(
                "INSERT OR REPLACE INTO students VALUES (?, ?, ?, ?, ?)",
                (code, new.id, new.nickname, now, now),
            )
            return new

    def _seen(self, code: str, student: str, now: float) -> None:
        with self._locked():
            self._db.execute(
                "UPDATE students SET seen = ? WHERE code = ? AND id = ?", (now, code, student)
            )

    def _answer(self, code: str, student: str, question_id: str, choice: int, now: float) -> bool:
        with self._locked():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                stored = self._answerable(code, student, question_id, choice)
                if stored:
                    self._db.execute(
                        "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                        (code, question_id, student, choice, now),
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return stored

    def _answerable(self, code: str, student: str, question_id: str, choice: int) -> bool:
        row = self._db.execute(
            "SELECT state, version FROM classes WHERE code = ?", (code,)
        ).fetchone()
        joined = self._db.execute(
            "SELECT 1 FROM students WHERE code = ? AND id = ?", (code, student)
        ).fetchone()
        if row is None or joined is None:
            return False
        state = ClassState.from_json(row[0], int(row[1]))
        return (
            state.question_id == question_id
            and state.revealed != question_id
            and 0 <= choice < state.options
        )

    def _choices(self, code: str, question_id: str) -> list[int]:
        with self._locked():
            rows = self._db.execute(
                "SELECT choice FROM answers WHERE code = ? AND question = ?", (code, question_id)
            ).fetchall()
        return [int(r[0]) for r in rows]

    def _answer_of(self, code: str, student: str, question_id: str) -> int | None:
        with self._locked():
            row = self._db.execute(
                "SELECT choice FROM answers WHERE code = ? AND question = ? AND student = ?",
                (code, question_id, student),
            ).fetchone()
        return None if row is None else int(row[0])

    def _roster(self, code: str) -> Roster:
        with self._locked():
            joined, active = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(seen >= ?), 0) FROM students WHERE code = ?",
                (time.time() - ACTIVE_SECONDS, code),
            ).fetchone()
        return Roster(int(joined), int(active))
