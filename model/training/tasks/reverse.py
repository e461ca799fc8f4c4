"""String reversal: target character i comes from source position len - 1 - i."""

from __future__ import annotations

from attnlens.model.training.tasks.base import StringTask
from attnlens.model.training.tasks.strings import PRINTABLE
from attnlens.record.example import Example


class ReverseTask(StringTask):
    name = "reverse"
    description = (
        "Reverses what you type (letters of either case, digits, spaces, punctuation); "
        "cross-attention should trace the anti-diagonal."
    )
    chars = PRINTABLE
    example = "Hello, World!"

    default_max_len = 16
    # Runs of one character among others ("ab%%%%%c") need the count kept by position, not by
    # content: reverse's mix holds runs of up to six characters too.
    mix = (
        ("random", 0.3),
        ("runs", 0.2),
        ("many runs", 0.15),
        ("digits", 0.15),
        ("typed", 0.2),
    )

    def answer(self, source: str) -> Example:
        n = len(source)
        return Example(source, source[::-1], tuple(range(n - 1, -1, -1)))
