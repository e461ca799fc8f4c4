"""What a task gives the trainer: example pairs, their vocabulary and true alignments; what a
model of it reads of a typed text; and the hard suite it is measured on besides its held-out set."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property

from attnlens.model.net.tokenizer import CharTokenizer, Tokenizer
from attnlens.model.training.tasks.strings import (
    TypedText,
    digits,
    hard_strings,
    random_chars,
    runs,
    with_a_run,
)
from attnlens.record.errors import characters, literal, quoted
from attnlens.record.example import Example


@dataclass(frozen=True)
class Reading:
    """What a model of the task reads of a typed text, and what the user should be told about
    the difference (empty when it reads the text as typed)."""

    text: str
    notes: tuple[str, ...] = ()


HardSuite = dict[str, list[Example]]  # kind of hard input → its examples


class Task(ABC):
    """A generator of (source, target) pairs; character tokens unless a task says otherwise."""

    name: str
    description: str
    chars: str
    max_source_len: int  # longest source, in tokens
    example = "hello world"  # what the app and CLI show first for a model of this task

    @property
    def tokenizer(self) -> Tokenizer:
        return CharTokenizer(self.chars)

    @abstractmethod
    def sample(self, rng: random.Random) -> Example:
        """One random example."""

    knows_answers = False  # whether `reference` names the right answer of every text it reads

    def read(self, text: str) -> Reading:
        """What a model of this task reads of a typed text: the text itself unless the task
        normalises it (and then says so), with a note when the task cannot read it."""
        return Reading(text, self.unread_notes(text))

    def reference(self, source: str) -> Example | None:
        """The right answer and true alignment for a source typed by a user; None when the
        task cannot tell (outside its vocabulary or grammar, or a task that does not say)."""
        return None

    def accepts(self, source: str, output: str) -> bool:
        """Whether output is a right answer for a typed source (the reference's, unless the
        task has several right answers); False when the task cannot tell."""
        reference = self.reference(source)
        return reference is not None and output == reference.target

    def unread_notes(self, text: str) -> tuple[str, ...]:
        """A plain note when this task cannot read a typed text (its model's output is then a
        guess with no right answer to check it against), else none."""
        if not self.knows_answers or not text.strip() or self.reference(text) is not None:
            return ()
        return (
            f"{self.name} cannot read {literal(text)}: {self.why_unread(text)}. Its output for "
            "it is a guess, with no right answer to check it against",
        )

    def why_unread(self, text: str) -> str:
        """Why a text this task cannot read is outside what it was trained on."""
        return "it is outside what the task was trained on"

    def examples(self, n: int, seed: int) -> list[Example]:
        """n examples from a seeded generator: the same seed gives the same list."""
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]

    @abstractmethod
    def hard_suite(self, n: int, seed: int) -> HardSuite:
        """n examples of each kind of input people type that its held-out set rarely holds
        (repeats, the shortest and longest inputs, mixed case), the same for the same seed;
        sources as typed (`read` gives what the model reads)."""


def kind_rng(seed: int, kind: str) -> random.Random:
    """One generator per kind of the hard suite, so that n of one kind does not move another."""
    return random.Random(f"{seed}:{kind}")


class StringTask(Task):
    """Strings over `chars` of min_len..max_len characters, each mapped to its answer by a rule
    that works for any string of the vocabulary, typed ones included.

    Training draws each string from `mix`: random characters, runs of a few repeated characters,
    digits only, or a window of real typed text; the hard suite is `strings.hard_strings`.
    """

    default_max_len: int
    mix: tuple[tuple[str, float], ...] = (
        ("random", 0.4),
        ("runs", 0.25),
        ("digits", 0.15),
        ("typed", 0.2),
    )

    def __init__(self, min_len: int = 1, max_len: int | None = None) -> None:
        self.min_len = min_len
        self.max_len = self.default_max_len if max_len is None else max_len
        self.max_source_len = self.max_len

    @cached_property
    def typed(self) -> TypedText:
        return TypedText()

    @abstractmethod
    def answer(self, source: str) -> Example:
        """The target of source and where each target character comes from."""

    def sample(self, rng: random.Random) -> Example:
        n = self.length(rng)
        kind = rng.choices([k for k, _ in self.mix], [w for _, w in self.mix])[0]
        return self.answer(self.draw(kind, rng, n))

    def length(self, rng: random.Random) -> int:
        """How long a training string is: any length alike."""
        return rng.randint(self.min_len, self.max_len)

    def draw(self, kind: str, rng: random.Random, n: int) -> str:
        """A training string of n characters of one kind of the mix."""
        if kind == "runs":
            return runs(rng, self.chars, n)
        if kind == "many runs":  # runs of up to six characters: "S!#######s"
            return runs(rng, self.chars, n, most=6)
        if kind == "digits":
            return digits(rng, n)
        if kind == "a run":  # random characters around one run of 3 or more: "k2%%%%%%q"
            return with_a_run(rng, self.chars, max(n, 3))
        if kind == "typed":
            return self.typed.window(rng, n)
        return random_chars(rng, self.chars, n)

    def hard_suite(self, n: int, seed: int) -> HardSuite:
        suite: HardSuite = {}
        for kind, (draw, length) in hard_strings(
            self.chars, self.typed, self.min_len, self.max_len
        ).items():
            rng = kind_rng(seed, kind)
            suite[kind] = [self.answer(draw(rng, length(rng))) for _ in range(n)]
        return suite

    knows_answers = True

    def reference(self, source: str) -> Example | None:
        return self.answer(source) if source and set(source) <= set(self.chars) else None

    def why_unread(self, text: str) -> str:
        outside = [c for c in characters(text) if any(ch not in self.chars for ch in c)]
        verb = "is" if len(dict.fromkeys(outside)) == 1 else "are"
        return f"{quoted(outside)} {verb} not among the characters it was trained on"
