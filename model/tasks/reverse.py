"""String reversal: target character i comes from source position len - 1 - i."""

from __future__ import annotations

import random
import string

from model.tasks.base import Example, Task


class ReverseTask(Task):
    name = "reverse"
    description = (
        "Reverses a string of lowercase letters, digits and spaces; "
        "cross-attention should trace the anti-diagonal."
    )
    chars = string.ascii_lowercase + string.digits + " "

    def __init__(self, min_len: int = 1, max_len: int = 16) -> None:
        self.min_len, self.max_len = min_len, max_len
        self.max_source_len = max_len

    def sample(self, rng: random.Random) -> Example:
        n = rng.randint(self.min_len, self.max_len)
        return self._reversed("".join(rng.choice(self.chars) for _ in range(n)))

    def reference(self, source: str) -> Example | None:
        return self._reversed(source) if source and set(source) <= set(self.chars) else None

    @staticmethod
    def _reversed(source: str) -> Example:
        n = len(source)
        return Example(source, source[::-1], tuple(range(n - 1, -1, -1)))
