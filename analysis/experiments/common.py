"""What every head experiment shares: the heads a model has, progress reports, batching."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, TypeVar

import numpy as np
import pandas as pd

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.lens import Capabilities
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind, ModelInfo

T = TypeVar("T")
MAX_N = 2000  # inputs an experiment takes at most: memory and minutes stay bounded


class Progress(Protocol):
    """Told how far a long run is: `done` of `total` steps, and what it is doing."""

    def __call__(self, done: int, total: int, what: str) -> None: ...


def no_progress(done: int, total: int, what: str) -> None:
    """A Progress that reports nothing."""


def kinds_of(info: ModelInfo) -> tuple[Kind, ...]:
    """The kinds of attention heads of a model's architecture, in the record's order."""
    return info.kinds


def all_heads(info: ModelInfo, kinds: Sequence[Kind] | None = None) -> list[HeadRef]:
    """Every head of the given kinds (default: all the model has), in kind, layer, head order."""
    heads = []
    for kind in kinds or kinds_of(info):
        layers, per_layer = info.shape(kind)
        heads += [
            HeadRef(kind, layer, head) for layer in range(layers) for head in range(per_layer)
        ]
    return heads


def head_table(heads: Sequence[HeadRef], **scores: Sequence[float] | np.ndarray) -> pd.DataFrame:
    """Rows kind (encoder_self, decoder_self or cross), layer, head and one column per score."""
    frame = pd.DataFrame(
        {
            "kind": [h.kind for h in heads],
            "layer": [h.layer for h in heads],
            "head": [h.head for h in heads],
        }
    )
    for name, values in scores.items():
        frame[name] = np.asarray(values, dtype=np.float64)
    return frame


def applies(reason: str | None) -> None:
    """An InputError with the reason an experiment does not apply to a model, where one is
    given (each experiment's `why_not`)."""
    if reason is not None:
        raise InputError(reason)


def needed(part: T | None, can: Capabilities, name: str) -> T:
    """A part of the model's capabilities an experiment runs on, or an InputError with the
    reason the model lacks it (what a front end shows before offering the experiment)."""
    if part is None:
        raise InputError(can.reason(name))
    return part


def check_n(n: int, what: str = "--n") -> int:
    """n within 1..MAX_N."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 1 <= n <= MAX_N:
        raise InputError(f"{what} must be between 1 and {MAX_N}, got {n!r}")
    return int(n)


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """items in consecutive pieces of at most size."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
