"""What a task gives the trainer: example pairs, their vocabulary and true alignments."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass

from attnlens.model.net.tokenizer import CharTokenizer, Tokenizer


@dataclass(frozen=True)
class Example:
    """A source, its target, and for each target token the source token it comes from."""

    source: str
    target: str
    alignment: tuple[int, ...]  # one per target token: the index of its source token


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

    def reference(self, source: str) -> Example | None:
        """The right answer and true alignment for a source typed by a user; None when the
        task cannot tell (outside its vocabulary or grammar, or a task that does not say)."""
        return None

    def examples(self, n: int, seed: int) -> list[Example]:
        """n examples from a seeded generator: the same seed gives the same list."""
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]


class StringTask(Task):
    """Random strings over `chars` of min_len..max_len characters, each mapped to its answer
    by a rule that works for any string of the vocabulary, typed ones included."""

    default_max_len: int

    def __init__(self, min_len: int = 1, max_len: int | None = None) -> None:
        self.min_len = min_len
        self.max_len = self.default_max_len if max_len is None else max_len
        self.max_source_len = self.max_len

    @abstractmethod
    def answer(self, source: str) -> Example:
        """The target of source and where each target character comes from."""

    def sample(self, rng: random.Random) -> Example:
        n = rng.randint(self.min_len, self.max_len)
        return self.answer("".join(rng.choice(self.chars) for _ in range(n)))

    def reference(self, source: str) -> Example | None:
        return self.answer(source) if source and set(source) <= set(self.chars) else None
