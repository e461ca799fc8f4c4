"""Sorting characters: target character i comes from the source position that holds it."""

from __future__ import annotations

import random
import string

from model.tasks.base import Example, Task


def sorted_positions(text: str) -> tuple[int, ...]:
    """Source positions in sorted order; equal characters keep their source order (stable)."""
    return tuple(sorted(range(len(text)), key=lambda i: text[i]))


class SortTask(Task):
    """Sort a string of digits and lowercase letters (digits first, then a-z)."""

    name = "sort"
    description = (
        "Sorts digits and letters (0-9 before a-z); cross-attention hunts for each output "
        "character's place in the source, duplicates left to right."
    )
    chars = string.digits + string.ascii_lowercase
    example = "attention"

    def __init__(self, min_len: int = 1, max_len: int = 12) -> None:
        self.min_len, self.max_len = min_len, max_len
        self.max_source_len = max_len

    def sample(self, rng: random.Random) -> Example:
        n = rng.randint(self.min_len, self.max_len)
        return self._sorted("".join(rng.choice(self.chars) for _ in range(n)))

    def reference(self, source: str) -> Example | None:
        return self._sorted(source) if source and set(source) <= set(self.chars) else None

    @staticmethod
    def _sorted(source: str) -> Example:
        order = sorted_positions(source)
        return Example(source, "".join(source[i] for i in order), order)
