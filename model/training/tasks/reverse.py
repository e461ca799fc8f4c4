"""String reversal: target character i comes from source position len - 1 - i."""

from __future__ import annotations

from attnlens.model.training.tasks.base import Example, StringTask
from attnlens.model.training.tasks.strings import PRINTABLE


class ReverseTask(StringTask):
    name = "reverse"
    description = (
        "Reverses what you type (letters of either case, digits, spaces, punctuation); "
        "cross-attention should trace the anti-diagonal."
    )
    chars = PRINTABLE
    example = "Hello, World!"

    default_max_len = 16

    def answer(self, source: str) -> Example:
        n = len(source)
        return Example(source, source[::-1], tuple(range(n - 1, -1, -1)))
