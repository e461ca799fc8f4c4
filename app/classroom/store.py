"""Where a live class lives: SQLite by default (one file, nothing to set up), Redis when several
replicas serve one class (docs/teaching.md and docs/deploying.md).

Every rule of the class is checked here, whatever a browser sends: only the teacher key moves
the class, a student id is one the server signed for the class, a student answers only the
question on screen, once revealed the answers are final. An answer is acknowledged only once
the store has it on disk, and the server keeps its own copy of every class it served: a store
that lost its data (a deleted or replaced file, a Redis restarted empty) is noticed, written back
from that copy, and the teacher is told in plain words.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from attnlens.app.classroom.limits import (
    MAX_STUDENTS,
    ClassError,
    NotIssuedError,
    NotTeacherError,
    StoreLostError,
)
from attnlens.app.classroom.names import (
    key_hash,
    key_matches,
    new_code,
    new_key,
    new_once,
    new_student_id,
    normal_code,
    normal_once,
    once_digest,
    pass_matches,
    signed_for,
    teacher_pass,
    valid_student_id,
)
from attnlens.app.classroom.state import (
    ClassCopy,
    ClassState,
    Client,
    Created,
    HandOver,
    Member,
    Roster,
    Student,
)
from attnlens.app.classroom.store_backend import StoreBackend

T = TypeVar("T")
ACTIVE_SECONDS = 30.0  # a student seen this recently counts as present
KEEP_SECONDS = 7 * 24 * 3600  # a class is forgotten a week after its teacher last moved it
NOTICES = 20  # the store's latest notices kept for teachers
ONCE_SECONDS = 180.0  # a one-time code for another device works this long after it was made
ONCE_WRONG = 100  # wrong tries at a class's one-time code, from any address, void it


class ClassStore(StoreBackend):
    """One store of classes, shared by every session of a process (thread-safe)."""

    url: str

    def __init__(self) -> None:
        self._copies: dict[str, ClassCopy] = {}  # code -> the server's copy
        self._copy_lock = threading.RLock()
        self._recovering = threading.Lock()
        self._notices: list[tuple[float, str]] = []
        self.closed = False

    # -- what the pages call -------------------------------------------------------------------

    def create(self, state: ClassState) -> Created:
        """A new class in `state`; its join code and the teacher's key."""
        for _ in range(20):
            code, key = new_code(), new_key()
            stamped = state.moved(updated=time.time())
            if self._run(lambda: self._insert(code, key_hash(key), stamped)):  # noqa: B023
                with self._copy_lock:
                    self._forget_old_copies()
                    self._copies[code] = ClassCopy(key_hash(key), stamped)
                return Created(code, key)
        raise ClassError("no free join code found after 20 tries; try again")

    def state(self, code: str) -> ClassState | None:
        """The class as it is now, or None for a code that names no class."""
        code = normal_code(code)
        return self._run(lambda: self._state(code), absent=_none) if code else None

    def is_teacher(self, code: str, key: str | None) -> bool:
        """Whether `key` moves the class: its teacher key, or a pass this server signed for it
        (a device the class was handed to)."""
        code = normal_code(code)
        stored = self._run(lambda: self._teacher_hash(code), absent=_none) if code else None
        return stored is not None and (key_matches(key, stored) or pass_matches(key, code, stored))

    def hand_over(self, code: str, key: str | None) -> HandOver:
        """A one-time code (teacher only) that gives another device a pass for the class
        (take_over): it works once, for ONCE_SECONDS, and replaces the class's earlier one."""
        if not self.is_teacher(code, key):
            raise NotTeacherError("only the teacher can hand the class to another device")
        code, once = normal_code(code), new_once()
        made = HandOver(once, time.time() + ONCE_SECONDS)
        self._run(lambda: self._offer(code, once_digest(code, once), made.expires))
        return made

    def take_over(self, code: str, once: str) -> str | None:
        """A teacher pass for the class if `once` is its open one-time code (used up by this);
        None otherwise: a wrong code counts against the open one, void after ONCE_WRONG."""
        code, once = normal_code(code), normal_once(once)
        teacher = self._run(lambda: self._teacher_hash(code), absent=_none) if code else None
        if teacher is None:
            return None
        digest = once_digest(code, once or "-")
        if not self._run(lambda: self._claim(code, digest, time.time(), ONCE_WRONG)):
            return None
        return teacher_pass(code, teacher)

    def handed_over(self, code: str) -> float | None:
        """When the class's last one-time code was used (time.time()), if it was."""
        code = normal_code(code)
        return self._run(lambda: self._claimed(code)) if code else None

    def update(self, code: str, key: str | None, state: ClassState) -> ClassState:
        """Move the class to `state` (teacher only); the stored state with its new version."""
        if not self.is_teacher(code, key):
            raise NotTeacherError("only the teacher's link can move the class or reveal answers")
        code = normal_code(code)
        self._copy_of(code)
        stamped = state.moved(updated=time.time())
        done = self._run(lambda: self._update(code, stamped), write=True)
        with self._copy_lock:
            if code in self._copies:
                self._copies[code].state = done
        return done

    def configure(
        self, code: str, key: str | None, size: int, per_address: int, locked: bool
    ) -> ClassState:
        """The teacher's settings: how many students, how many from one address, and whether
        new students may join."""
        for name, value in (("class size", size), ("students from one address", per_address)):
            if not 1 <= value <= MAX_STUDENTS:
                raise ClassError(f"{name} {value} is not between 1 and {MAX_STUDENTS}")
        state = self.state(code)
        if state is None:
            raise ClassError(f"no class has the code {normal_code(code) or code!r}")
        return self.update(
            code, key, state.moved(size=size, per_address=per_address, locked=locked)
        )

    def join(self, code: str, student: str | None = None, client: Client | None = None) -> Student:
        """A student of the class: the one with this id if the server gave it out for this class
        (a reload, a server restart), else a new one with a random nickname, within the class's
        limits. A made-up id is refused."""
        code = normal_code(code)
        teacher = self._run(lambda: self._teacher_hash(code), absent=_none) if code else None
        if not code or teacher is None:
            raise ClassError("no class has this join code; check it with your teacher")
        if student is not None:
            known = self._known(code, teacher, student)
            if known is not None:
                return known
        state = self.state(code)
        if state is None:
            raise ClassError("no class has this join code; check it with your teacher")
        if state.locked:
            raise ClassError("the teacher has closed this class to new students")
        self._copy_of(code)
        where = client or Client("", "")  # none: the server's own (a bench, a test)
        proposed = Member(
            student or new_student_id(code, teacher), "", where.address, where.browser, time.time()
        )
        member = self._run(lambda: self._join(code, proposed, state, client is not None), True)
        with self._copy_lock:
            if code in self._copies:
                self._copies[code].members[member.id] = member
        return member.student

    def _known(self, code: str, teacher: str, student: str) -> Student | None:
        """The student this id names; None for an id this class signed that the store does not
        hold (it joins again, within the limits); a made-up or removed one is refused."""
        if self._run(lambda: self._removed(code, student)):
            raise ClassError("the teacher removed this student from the class")
        if valid_student_id(student):
            member = self._run(lambda: self._member(code, student), absent=_none)
            if member is not None:
                return member.student
            if signed_for(student, code, teacher):
                return None
        raise NotIssuedError(
            "this link's student id (me=…) was not given out by this class: "
            "open the class's join link without it"
        )

    def remove(self, code: str, key: str | None, student: str) -> bool:
        """Take a student out of the class (teacher only): their answers are no longer counted
        and their link no longer joins."""
        if not self.is_teacher(code, key):
            raise NotTeacherError("only the teacher's link can remove a student")
        code = normal_code(code)
        self._copy_of(code)
        done = self._run(lambda: self._remove(code, student), write=True)
        with self._copy_lock:
            copy = self._copies.get(code)
            if copy is not None:
                copy.members.pop(student, None)
                copy.removed.add(student)
                for chosen in copy.answers.values():
                    chosen.pop(student, None)
        return done

    def members(self, code: str) -> list[Student]:
        """The class's students, by nickname."""
        code = normal_code(code)
        found = self._run(lambda: self._members(code)) if code else []
        return sorted((m.student for m in found), key=lambda s: s.nickname)

    def seen(self, code: str, student: str) -> None:
        """The student is still here (their screen asked for the class state)."""
        if valid_student_id(student) and normal_code(code):
            self._run(lambda: self._seen(normal_code(code), student, time.time()))

    def left(self, code: str, student: str) -> None:
        """The student's page closed: they no longer count as here (until it asks again)."""
        if valid_student_id(student) and normal_code(code):
            self._run(lambda: self._seen(normal_code(code), student, 0.0))

    def answer(self, code: str, student: str, question_id: str, choice: int) -> bool:
        """Record a student's answer to the question on screen; True only once the store has
        it on disk (and the server in its copy). False (nothing stored) when the question is not
        the current one, is revealed, or the choice is not an option."""
        code = normal_code(code)
        if not code or not valid_student_id(student) or not isinstance(choice, int):
            return False
        self._copy_of(code)
        qid, now = str(question_id), time.time()
        # refused: looked at again once any rebuild under way is done (another thread's rebuild
        # may have opened the new file and not yet written this class back into it)
        done = self._run(lambda: self._answer(code, student, qid, choice, now), True, _refused)
        if done:
            with self._copy_lock:
                if code in self._copies:
                    self._copies[code].answers.setdefault(qid, {})[student] = (choice, now)
        return done

    def counts(self, code: str, question_id: str, options: int) -> list[int]:
        """How many students chose each option of a question."""
        chosen = self._run(lambda: self._choices(normal_code(code), str(question_id)))
        return [sum(1 for c in chosen if c == i) for i in range(options)]

    def answer_of(self, code: str, student: str, question_id: str) -> int | None:
        """The option a student chose, if they answered."""
        code = normal_code(code)
        if not code or not valid_student_id(student):
            return None
        return self._run(lambda: self._answer_of(code, student, str(question_id)))

    def roster(self, code: str) -> Roster:
        """Students who joined, who were seen in the last ACTIVE_SECONDS, and the most from any
        one address."""
        code = normal_code(code)
        return self._run(lambda: self._roster(code)) if code else Roster(0, 0)

    def notices(self, since: float = 0.0) -> list[str]:
        """What the store had to do on its own since `since` (time.time()), in plain words for
        the teacher: data it found lost and wrote back, a damaged file it moved aside."""
        return [
            f"{time.strftime('%H:%M', time.localtime(at))}: {text}"
            for at, text in self._notices
            if at >= since
        ]

    # -- the server's copy, and putting a store back -------------------------------------------

    def _run(
        self, call: Callable[[], T], write: bool = False, absent: Callable[[T], bool] | None = None
    ) -> T:
        """One call on the store, after checking it is still the store this server wrote to;
        a write is checked again after, before it is acknowledged. A read that finds nothing
        (`absent`) looks again once the store is checked now and any recovery under way is
        done: a store that lost its data is noticed before a page says "no such class"."""
        if self._check() is not None:
            self._recover()
        try:
            result = call()
        except StoreLostError:
            self._recover()
            result = call()
        if write and self._written() is not None:
            self._recover()  # the copy holds this write: it is written back with the rest
        elif absent is not None and absent(result) and self._copies:
            self._recover()
            result = call()
        return result

    def _copy_of(self, code: str) -> None:
        """Hold the server's copy of a class before writing to it (read whole the first time)."""
        with self._copy_lock:
            if code in self._copies:
                return
        copy = self._run(lambda: self._dump(code))
        if copy is not None:
            with self._copy_lock:
                self._copies.setdefault(code, copy)

    def _forget_old_copies(self) -> None:
        old = time.time() - KEEP_SECONDS
        for code in [c for c, copy in self._copies.items() if copy.state.updated < old]:
            del self._copies[code]

    def _recover(self) -> None:
        """If the store is not the one this server wrote to: make it usable again and write back
        every class this server holds a copy of (what is missing only: a newer answer another
        replica wrote stays), and tell the teachers. One thread at a time; the others wait."""
        with self._recovering:
            why = self._check(now=True)
            if why is None:
                return  # fine, or another thread put it back while this one waited
            aside = self._reset(why)
            with self._copy_lock:
                copies = {code: copy for code, copy in self._copies.items()}
            for code, copy in copies.items():
                self._put_back(code, copy)
            students = sum(len(c.members) for c in copies.values())
            answers = sum(c.counted() for c in copies.values())
            self.notice(
                f"{why}. This server wrote back its own copy: {len(copies)} class(es), "
                f"{students} student(s), {answers} answer(s); nothing it had acknowledged is "
                f"lost.{aside}"
            )

    def notice(self, text: str) -> None:
        """Tell the teachers (their pages show the store's notices) and the server's log."""
        self._notices = [*self._notices, (time.time(), text)][-NOTICES:]
        print(f"attnlens: class store {self.url}: {text}", flush=True, file=sys.stderr)


def _none(value: object) -> bool:
    return value is None


def _refused(value: bool) -> bool:
    return not value
