"""What a search strategy does at each step: propose ranked continuations of the live beams."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass(frozen=True)
class Proposal:
    """Continuations the strategy considered, best first; the step loop decides their status."""

    parents: list[int]  # which live hypothesis (row of the scores) each continues
    tokens: list[int]


class Strategy(Protocol):
    """Greedy, beam search and sampling: one `propose` each, one step loop for all."""

    def propose(
        self, log_probs: torch.Tensor, scores: torch.Tensor, forced: int | None
    ) -> Proposal:
        """Ranked continuations of the live hypotheses; log_probs (B, V) are the step's
        (processed) scores, scores (B,) what each hypothesis has summed so far."""
        ...


def forced_proposal(log_probs: torch.Tensor, scores: torch.Tensor, token: int) -> Proposal:
    """Every live hypothesis takes the forced token; ranked by the score that gives."""
    logprobs = log_probs[:, token]  # (B,)
    order = (scores + logprobs).argsort(descending=True, stable=True)  # (B,)
    return Proposal(order.tolist(), [token] * len(order))
