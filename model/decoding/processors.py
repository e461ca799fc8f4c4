"""What may change a step's scores before a strategy picks from them: token bans, and (for
Hugging Face models) the processors of the model's generation config.

A processor takes every live hypothesis's whole decoder sequence so far, `ids` (B, P + t) with
the prefix first, and the step's scores (B, V), and returns new scores; Hugging Face's
LogitsProcessor objects fit as they are. Greedy and sampling hand them raw logits when the model
gives them (as `generate` does), beam search the log-probabilities; either way the record keeps
the model's own log-probability of every chosen token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


class Processor(Protocol):
    """Scores (B, V) in, scores out; ids (B, P + t) are the sequences they continue."""

    def __call__(self, ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor: ...


@dataclass(frozen=True)
class TokenBan:
    """Tokens the model never produces (never a training target, or banned by its config):
    -inf, not renormalised, so every other token keeps its own score."""

    banned: tuple[int, ...]

    def __call__(self, ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if not self.banned:
            return scores
        out = scores.clone()
        out[:, list(self.banned)] = float("-inf")
        return out


def apply(processors: Sequence[Processor], ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """Every processor in order."""
    for processor in processors:
        scores = processor(ids, scores)
    return scores
