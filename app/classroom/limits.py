"""What a class refuses, and how it says so: the limits on who joins, and the errors a page
shows (to a teacher as they are; to a student in words without the store's address)."""

from __future__ import annotations

from attnlens.app.classroom.state import ClassState
from attnlens.record.errors import InputError

MAX_STUDENTS = 1000  # per class: memory and the roster stay bounded
PER_BROWSER = 3  # joins from one browser (address and cookie): reloads without the link
AWAY = (
    "The class cannot be reached just now, so nothing you tap is counted yet. "
    "Try again in a moment."
)


class ClassError(InputError):
    """Something a class cannot do, in words fit to show."""

    @property
    def for_students(self) -> str:
        """What a student's page shows (a store's address or a server path never)."""
        return str(self)


class NotTeacherError(ClassError):
    """A change asked for without the teacher's key."""


class NotIssuedError(ClassError):
    """A student id this class never gave out (made up, or another class's)."""


class StoreUnavailableError(ClassError):
    """The store cannot be reached or opened (its address is in the message: teachers and the
    command line see it, students see AWAY)."""

    @property
    def for_students(self) -> str:
        return AWAY


class StoreLostError(Exception):
    """Raised by a store's own code when it finds it is not the store it wrote to (its data
    lost or replaced); the base class writes the classes back and tries again."""


def limit_error(state: ClassState, joined: int, from_address: int, from_browser: int) -> str:
    """Why a new student cannot join (the limit and the count), or "" when they can."""
    if joined >= min(state.size, MAX_STUDENTS):
        return f"this class is full ({joined} students; its teacher set {state.size})"
    if from_browser >= PER_BROWSER:
        return (
            f"this browser has joined this class {from_browser} times already (the limit is "
            f"{PER_BROWSER}): open the link with your student id, or ask your teacher"
        )
    if from_address >= state.per_address:
        return (
            f"{from_address} students have joined from your network address already (the "
            f"class takes {state.per_address} from one address): ask your teacher to raise it"
        )
    return ""
