"""Sequences in which random spans repeat: what the bundled `induction` model learns from, and
the repeated random blocks its loss and heads are measured on (Olsson et al. 2022).

Random characters carry no information, so the only thing worth learning is that a span seen
before continues as it did then: "…k3x9…k3" → "x". That is what an induction head does.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass

INDUCTION_CHARS = string.ascii_lowercase + string.digits  # one token each: a–z, 0–9
INDUCTION_EXAMPLE = "k3x9mq2wz7k3x9mq2wz7"  # a typed repeated block, as the app first shows it
TEXT_LEN = 63  # training texts fill the model's 64 positions (the start token takes one)
MIN_TEXT_LEN = 24
BLOCK_LEN = 20  # the measured block: 20 distinct characters, then the same 20 again
COPY_SHARE = 0.6  # of the pieces of a training text, the share that repeats an earlier span


def repeated_text(rng: random.Random, chars: str = INDUCTION_CHARS) -> str:
    """One training text: random runs, and copies of earlier spans of it, up to TEXT_LEN."""
    length = rng.randint(MIN_TEXT_LEN, TEXT_LEN)
    if rng.random() < 0.3:  # a block repeated end to end, the shape the heads are measured on
        block = rng.sample(chars, rng.randint(5, min(len(chars), length // 2)))
        return "".join(block * (length // len(block) + 1))[:length]
    out: list[str] = []
    while len(out) < length:
        if len(out) >= 6 and rng.random() < COPY_SHARE:
            span = rng.randint(3, min(24, len(out)))
            start = rng.randint(0, len(out) - span)
            out += out[start : start + span]
        else:
            out += rng.choices(chars, k=rng.randint(2, 10))
    return "".join(out[:length])


@dataclass(frozen=True)
class RepeatedBlocks:
    """n texts, each a block of distinct random characters written twice: positions
    0..block-1 are the first copy, block..2·block-1 the second (text positions, no start)."""

    texts: tuple[str, ...]
    block: int


def repeated_blocks(
    n: int, seed: int, block: int = BLOCK_LEN, chars: Sequence[str] = INDUCTION_CHARS
) -> RepeatedBlocks:
    """The test of Olsson et al.: random tokens, repeated. Within a block no character
    repeats, so each token of the second copy has exactly one earlier occurrence."""
    if not 2 <= block <= len(chars):
        raise ValueError(f"a block of distinct characters has 2-{len(chars)}, got {block}")
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        drawn = "".join(rng.sample(list(chars), block))
        texts.append(drawn + drawn)
    return RepeatedBlocks(tuple(texts), block)
