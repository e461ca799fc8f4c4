"""Real English that ships with Python: the help topics of `pydoc_data.topics`, as sentences.

The bundled language model `lm` is trained on these, so it needs nothing from the network.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

CHARS = string.ascii_letters + string.digits + string.punctuation + " "
MIN_CHARS, MAX_CHARS = 12, 120
HELD_OUT_EVERY = 10  # every tenth sentence is kept out of training


@dataclass(frozen=True)
class Corpus:
    train: tuple[str, ...]
    held_out: tuple[str, ...]


def sentences() -> list[str]:
    """Whitespace-normalised sentences of the help topics, in a fixed order, within limits."""
    from pydoc_data.topics import topics

    text = " ".join(" ".join(topics[key].split()) for key in sorted(topics))
    pieces = re.split(r"(?<=[.!?:])\s+", text)
    return [p for p in pieces if MIN_CHARS <= len(p) <= MAX_CHARS and set(p) <= set(CHARS)]


def load_corpus() -> Corpus:
    """Training and held-out sentences; the split is fixed, not random."""
    all_sentences = sentences()
    held = tuple(s for i, s in enumerate(all_sentences) if i % HELD_OUT_EVERY == 0)
    train = tuple(s for i, s in enumerate(all_sentences) if i % HELD_OUT_EVERY != 0)
    return Corpus(train, held)
