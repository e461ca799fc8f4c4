"""What each class store implements (sqlite_store.py, redis_store.py): the calls store.py's
ClassStore makes, under its checks, to keep a class's rules, its students and answers, and the
one-time codes that hand a class to another device of its teacher's."""

from __future__ import annotations

from abc import ABC, abstractmethod

from attnlens.app.classroom.state import ClassCopy, ClassState, Member, Roster


class StoreBackend(ABC):
    """The store's own calls: each one read or one atomic write; ClassStore (store.py) runs
    them behind its checks and keeps the server's copy."""

    closed: bool

    @abstractmethod
    def ping(self) -> None:
        """Raise StoreUnavailableError unless the store answers."""

    def _check(self, now: bool = False) -> str | None:
        """Why the store is not the one this server wrote to (plain words), or None; a check
        that costs a round trip may be skipped for a moment, unless `now`."""
        return None

    def _written(self) -> str | None:
        """_check after a write, before it is acknowledged."""
        return self._check(now=True)

    def _reset(self, why: str) -> str:
        """Make the store usable after a loss; words on what was kept aside (may be "")."""
        return ""

    @abstractmethod
    def _dump(self, code: str) -> ClassCopy | None:
        """The whole class as the store holds it."""

    @abstractmethod
    def _put_back(self, code: str, copy: ClassCopy) -> None:
        """Write what the store lacks of `copy`; what it holds stays."""

    @abstractmethod
    def _insert(self, code: str, teacher: str, state: ClassState) -> bool: ...

    @abstractmethod
    def _state(self, code: str) -> ClassState | None: ...

    @abstractmethod
    def _teacher_hash(self, code: str) -> str | None: ...

    @abstractmethod
    def _update(self, code: str, state: ClassState) -> ClassState: ...

    @abstractmethod
    def _member(self, code: str, student: str) -> Member | None: ...

    @abstractmethod
    def _removed(self, code: str, student: str) -> bool: ...

    @abstractmethod
    def _join(self, code: str, member: Member, state: ClassState, limited: bool) -> Member:
        """Atomically: add `member` with a nickname unique in the class, unless the class holds
        state.size students, or (when `limited`) state.per_address joined from its address or
        PER_BROWSER from its browser: then a ClassError saying which."""

    @abstractmethod
    def _remove(self, code: str, student: str) -> bool: ...

    @abstractmethod
    def _members(self, code: str) -> list[Member]: ...

    @abstractmethod
    def _seen(self, code: str, student: str, now: float) -> None: ...

    @abstractmethod
    def _offer(self, code: str, digest: str, expires: float) -> None:
        """Keep `digest` as the class's open one-time code until `expires`, in place of any
        earlier one."""

    @abstractmethod
    def _claim(self, code: str, digest: str, now: float, most_wrong: int) -> bool:
        """Atomically: True (and the code used up, noted as used at `now`) if `digest` is the
        class's open one-time code and it has not expired; else one more wrong try against the
        open code, which is void from `most_wrong` on."""

    @abstractmethod
    def _claimed(self, code: str) -> float | None: ...

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

    def close(self) -> None:
        """Let go of the file or connection (the next open_store of its URL opens it anew)."""
        self.closed = True
        self._close()

    @abstractmethod
    def _close(self) -> None: ...
