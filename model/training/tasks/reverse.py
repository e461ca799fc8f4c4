"""String reversal: target character i comes from source position len - 1 - i."""

from __future__ import annotations

import string

from attnlens.model.training.tasks.base import Example, StringTask


class ReverseTask(StringTask):
    name = "reverse"
    description = (
        "Reverses a string of lowercase letters, digits and spaces; "
        "cross-attention should trace the anti-diagonal."
    )
    chars = string.ascii_lowercase + string.digits + " "

    default_max_len = 16

    def answer(self, source: str) -> Example:
        n = len(source)
        return Example(source, source[::-1], tuple(range(n - 1, -1, -1)))
