"""Sorting characters: target character i comes from the source position that holds it."""

from __future__ import annotations

import string

from attnlens.model.training.tasks.base import Example, StringTask


def sorted_positions(text: str) -> tuple[int, ...]:
    """Source positions in sorted order; equal characters keep their source order (stable)."""
    return tuple(sorted(range(len(text)), key=lambda i: text[i]))


class SortTask(StringTask):
    """Sort a string of digits and lowercase letters (digits first, then a-z)."""

    name = "sort"
    description = (
        "Sorts digits and letters (0-9 before a-z); cross-attention hunts for each output "
        "character's place in the source, duplicates left to right."
    )
    chars = string.digits + string.ascii_lowercase
    example = "attention"

    default_max_len = 12

    def answer(self, source: str) -> Example:
        order = sorted_positions(source)
        return Example(source, "".join(source[i] for i in order), order)
