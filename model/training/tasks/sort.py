"""Sorting characters: target character i comes from the source position that holds it."""

from __future__ import annotations

import random

from attnlens.model.training.tasks.base import StringTask
from attnlens.model.training.tasks.strings import PRINTABLE
from attnlens.record.example import Example


def sorted_positions(text: str) -> tuple[int, ...]:
    """Source positions in sorted order; equal characters keep their source order (stable)."""
    return tuple(sorted(range(len(text)), key=lambda i: text[i]))


class SortTask(StringTask):
    """Sort the characters of what you type in Python's order (code points): space, then
    punctuation, digits and capitals before small letters, as `sorted` does."""

    name = "sort"
    description = (
        "Sorts the characters you type as Python's sorted() does (space and punctuation, "
        "digits, capitals, small letters); cross-attention hunts for each output character's "
        "place in the source, duplicates left to right."
    )
    chars = PRINTABLE
    example = "Mississippi"

    default_max_len = 12
    # Sorting a run means counting it: more runs and digits than reverse needs, and long strings
    # (the longer of two lengths) as often as short ones were before.
    mix: tuple[tuple[str, float], ...] = (
        ("random", 0.15),
        ("runs", 0.25),
        ("many runs", 0.15),
        ("digits", 0.2),
        ("typed", 0.25),
    )

    def length(self, rng: random.Random) -> int:
        return max(rng.randint(self.min_len, self.max_len), rng.randint(self.min_len, self.max_len))

    def answer(self, source: str) -> Example:
        order = sorted_positions(source)
        return Example(source, "".join(source[i] for i in order), order)


class SortRunsTask(SortTask):
    """sort's second stage of training: the same task with a fifth of its strings holding one
    long run among other characters ("k2%%%%%%q"), which the first stage's mix holds rarely:
    10000 steps of it left 96.5% of such strings right, 4000 more of this mix 99.5%."""

    mix: tuple[tuple[str, float], ...] = (
        ("random", 0.1),
        ("runs", 0.2),
        ("many runs", 0.15),
        ("a run", 0.2),
        ("digits", 0.15),
        ("typed", 0.2),
    )
