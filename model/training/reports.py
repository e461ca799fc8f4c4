"""What `attnlens eval` reports: plain records, without torch, so that the command line reads
them (and starts `attnlens serve`) without importing it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUITES = ("held-out", "hard")  # what `attnlens eval --suite` measures
MAX_EXAMPLES = 100_000  # per run (per kind of the hard suite): held in memory at once


@dataclass(frozen=True)
class KindScore:
    """A task model's scores on one kind of the hard suite."""

    kind: str
    n: int
    exact: float
    best_head: tuple[int, int]  # (layer, head) aligning this kind best
    best_head_alignment: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "best_head": list(self.best_head)}


@dataclass(frozen=True)
class TaskReport:
    """What `attnlens eval` measured on a model of one of our tasks: over every example of the
    suite, and for the hard suite also per kind."""

    model: str
    task: str
    n: int
    seed: int
    exact: float
    head_alignment: list[list[float]]  # (N, h): share of target tokens aligned by each head
    best_head: tuple[int, int]  # (layer, head)
    best_head_alignment: float
    suite: str = "held-out"
    kinds: tuple[KindScore, ...] = ()  # the hard suite's kinds, in order

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.__dict__, "best_head": list(self.best_head),
            "kinds": [k.to_dict() for k in self.kinds],
        }  # fmt: skip


@dataclass(frozen=True)
class KindPerplexity:
    """The language model on one kind of the hard suite."""

    kind: str
    n: int  # sentences
    perplexity: float
    unigram_perplexity: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PerplexityReport:
    """What `attnlens eval` measured on our language model."""

    model: str
    task: str
    n: int  # held-out sentences
    perplexity: float  # per character, the end token included
    unigram_perplexity: float  # character frequencies of the training sentences
    suite: str = "held-out"
    kinds: tuple[KindPerplexity, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "kinds": [k.to_dict() for k in self.kinds]}


Report = TaskReport | PerplexityReport
