"""What a task gives the trainer: example pairs, their vocabulary and true alignments."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass

from model.tokenizer import CharTokenizer


@dataclass(frozen=True)
class Example:
    """A source, its target, and for each target character the source position it comes from."""

    source: str
    target: str
    alignment: tuple[int, ...]  # len(target): source index of each target character


class Task(ABC):
    """A generator of (source, target) pairs over a character vocabulary."""

    name: str
    description: str
    chars: str
    max_source_len: int

    @property
    def tokenizer(self) -> CharTokenizer:
        return CharTokenizer(self.chars)

    @abstractmethod
    def sample(self, rng: random.Random) -> Example:
        """One random example."""

    def examples(self, n: int, seed: int) -> list[Example]:
        """n examples from a seeded generator: the same seed gives the same list."""
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]
