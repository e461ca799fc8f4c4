"""Where a live class lives: SQLite by default (one file, nothing to set up), Redis when several
replicas serve one class (README, "Teaching with attnlens").

Every rule of the class is checked here, whatever a browser sends: only the teacher key moves
the class, a student answers only the question on screen, once revealed the answers are final.
"""

from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod
from pathlib import Path

from attnlens.app.teaching.class_state import ClassState, Created, Roster, Student
from attnlens.app.teaching.names import (
    key_hash,
    key_matches,
    new_code,
    new_key,
    normal_code,
    valid_student_id,
)
from attnlens.record.errors import InputError

ENV = "ATTNLENS_CLASS_STORE"
MAX_STUDENTS = 1000  # per class: memory and the roster stay bounded
ACTIVE_SECONDS = 30.0  # a student seen this recently counts as present
KEEP_SECONDS = 7 * 24 * 3600  # a class is forgotten a week after its teacher last moved it


class ClassError(InputError):
    """Something a class cannot do, in words fit to show."""


class NotTeacherError(ClassError):
    """A change asked for without the teacher's key."""


class StoreUnavailableError(ClassError):
    """The store cannot be reached or opened."""


class ClassStore(ABC):
    """One store of classes, shared by every session of a process (thread-safe)."""

    url: str

    def create(self, state: ClassState) -> Created:
        """A new class in `state`; its join code and the teacher's key."""
        for _ in range(20):
            code, key = new_code(), new_key()
            if self._insert(code, key_hash(key), state.moved(updated=time.time())):
                return Created(code, key)
        raise ClassError("no free join code found after 20 tries; try again")

    def state(self, code: str) -> ClassState | None:
        """The class as it is now, or None for a code that names no class."""
        code = normal_code(code)
        return self._state(code) if code else None

    def is_teacher(self, code: str, key: str | None) -> bool:
        code = normal_code(code)
        stored = self._teacher_hash(code) if code else None
        return stored is not None and key_matches(key, stored)

    def update(self, code: str, key: str | None, state: ClassState) -> ClassState:
        """Move the class to `state` (teacher only); the stored state with its new version."""
        if not self.is_teacher(code, key):
            raise NotTeacherError("only the teacher's link can move the class or reveal answers")
        return self._update(normal_code(code), state.moved(updated=time.time()))

    def join(self, code: str, student: str | None = None) -> Student:
        """A student of the class: the one with this id if they joined before, else a new one
        with a random nickname."""
        code = normal_code(code)
        if not code or self._teacher_hash(code) is None:
            raise ClassError("no class has this join code; check it with your teacher")
        known = student if valid_student_id(student) else None
        return self._join(code, known, time.time())

    def seen(self, code: str, student: str) -> None:
        """The student is still here (their screen asked for the class state)."""
        if valid_student_id(student) and normal_code(code):
            self._seen(normal_code(code), student, time.time())

    def answer(self, code: str, student: str, question_id: str, choice: int) -> bool:
        """Record a student's answer to the question on screen; False (nothing stored) when
        the question is not the current one, is revealed, or the choice is not an option."""
        code = normal_code(code)
        if not code or not valid_student_id(student) or not isinstance(choice, int):
            return False
        return self._answer(code, student, str(question_id), choice, time.time())

    def counts(self, code: str, question_id: str, options: int) -> list[int]:
        """How many students chose each option of a question."""
        chosen = self._choices(normal_code(code), str(question_id))
        return [sum(1 for c in chosen if c == i) for i in range(options)]

    def answer_of(self, code: str, student: str, question_id: str) -> int | None:
        """The option a student chose, if they answered."""
        code = normal_code(code)
        if not code or not valid_student_id(student):
            return None
        return self._answer_of(code, student, str(question_id))

    def roster(self, code: str) -> Roster:
        """Students who joined, and who were seen in the last ACTIVE_SECONDS."""
        code = normal_code(code)
        return self._roster(code) if code else Roster(0, 0)

    @abstractmethod
    def ping(self) -> None:
        """Raise StoreUnavailableError unless the store answers."""

    @abstractmethod
    def _insert(self, code: str, teacher: str, state: ClassState) -> bool: ...

    @abstractmethod
    def _state(self, code: str) -> ClassState | None: ...

    @abstractmethod
    def _teacher_hash(self, code: str) -> str | None: ...

    @abstractmethod
    def _update(self, code: str, state: ClassState) -> ClassState: ...

    @abstractmethod
    def _join(self, code: str, student: str | None, now: float) -> Student: ...

    @abstractmethod
    def _seen(self, code: str, student: str, now: float) -> None: ...

    @abstractmethod
    def _answer(self, code: str, student: str, question_id: str, choice: int, now: float) -> bool:
        """Atomically: store the choice only if question_id is the class's current question,
        not revealed, and 0 ≤ choice < its options; a student's later answer replaces theirs."""

    @abstractmethod
    def _choices(self, code: str, question_id: str) -> list[int]: ...

    @abstractmethod
    def _answer_of(self, code: str, student: str, question_id: str) -> int | None: ...

    @abstractmethod
    def _roster(self, code: str) -> Roster: ...

    @abstractmethod
    def close(self) -> None:
        """Let go of the file or connection."""


def default_url() -> str:
    """SQLite in the user's data folder: one file, kept across restarts."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return f"sqlite:///{Path(base) / 'attnlens' / 'classes.sqlite3'}"


def store_url() -> str:
    """The store this process uses: $ATTNLENS_CLASS_STORE, else the default SQLite file."""
    return os.environ.get(ENV, "").strip() or default_url()


def open_store(url: str) -> ClassStore:
    """The store a URL names: sqlite:///PATH (or a plain path) or redis://HOST:PORT[/DB]."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        from attnlens.app.teaching.redis_store import RedisStore

        return RedisStore(url)
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") - 1 :]
    elif "://" in url:
        raise StoreUnavailableError(
            f"class store {url!r}: give sqlite:///PATH (the default) or redis://HOST:PORT/DB"
        )
    else:
        path = url
    from attnlens.app.teaching.sqlite_store import SQLiteStore

    return SQLiteStore(Path(path).expanduser())
