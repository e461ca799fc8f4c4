"""What a live class shares: the teacher's slide and view, the question on it, the reveal."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ClassState:
    """The class as the teacher left it; `version` goes up by one with every change, so a
    student's screen knows at a glance whether it is behind."""

    deck: str
    slide: int  # 0-based index into the deck
    view: dict[str, Any] = field(default_factory=dict)  # View.to_dict()
    question: dict[str, Any] | None = None  # Question.to_dict() of the slide's question
    question_id: str | None = None
    revealed: str | None = None  # the question whose answers the teacher revealed
    version: int = 0
    updated: float = 0.0  # time.time() of the teacher's last change
    size: int = 1000  # students the class takes at most (the teacher sets it, up to 1000)
    per_address: int = 50  # students who may join from one network address (teacher's choice)
    locked: bool = False  # no new students (those who joined come back)

    @property
    def options(self) -> int:
        """How many options the current question has (0 without one)."""
        return len(self.question["options"]) if self.question else 0

    def to_json(self) -> str:
        """Everything but the version, which the store keeps and counts itself."""
        data = asdict(self)
        data.pop("version")
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, version: int) -> ClassState:
        data = json.loads(text)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**{**known, "version": version})

    def moved(self, **changes: Any) -> ClassState:
        return replace(self, **changes)


@dataclass(frozen=True)
class Created:
    """A new class: its join code, and the key only the teacher's link carries."""

    code: str
    key: str


@dataclass(frozen=True)
class HandOver:
    """A one-time code that hands the class to another device of the teacher's: it works once,
    until `expires` (time.time())."""

    once: str
    expires: float


@dataclass(frozen=True)
class Student:
    """A student of one class: a random id kept in their link, and a random nickname."""

    id: str
    nickname: str


@dataclass(frozen=True)
class Client:
    """Who asks to join, as far as the server can tell: names.client_key hashes of the network
    address, and of that address with the browser's own cookie."""

    address: str
    browser: str


@dataclass(frozen=True)
class Member:
    """A student as the store keeps them: who they are, and where they joined from."""

    id: str
    nickname: str
    address: str = ""
    browser: str = ""
    joined: float = 0.0

    @property
    def student(self) -> Student:
        return Student(self.id, self.nickname)


@dataclass(frozen=True)
class Roster:
    """How many joined, how many were seen in the last ACTIVE seconds, and the most who
    joined from any one network address (many from one address: a script, or one school's
    network)."""

    joined: int
    active: int
    from_one_address: int = 0


@dataclass
class ClassCopy:
    """The server's own copy of a class it served: everything it acknowledged, so that a store
    that lost its data (a deleted file, a Redis restarted empty) can be written back."""

    teacher: str  # the teacher key's hash
    state: ClassState
    members: dict[str, Member] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    # question -> student -> (the option they chose, when: time.time()); the later one wins
    answers: dict[str, dict[str, tuple[int, float]]] = field(default_factory=dict)

    def counted(self) -> int:
        return sum(len(chosen) for chosen in self.answers.values())
