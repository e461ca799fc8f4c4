"""What a search strategy does at each step: propose ranked continuations of the live beams."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass(frozen=True)
class Proposal:
    """Continuations the strategy considered, best first; the step loop decides their status."""

    parents: list[int]  # which live hypothesis (row of the source's scores) each continues
    tokens: list[int]


@dataclass(frozen=True)
class Rows:
    """A step's live rows: log_probs (R, V) the (processed) scores of every live row, the
    sources' rows one after another, `sizes` rows each; scores (R,) what each has summed."""

    log_probs: torch.Tensor
    scores: torch.Tensor
    sizes: Sequence[int]


class Strategy(Protocol):
    """Greedy, beam search and sampling: one `propose` each, one step loop for all."""

    def propose(self, step: Rows) -> list[Proposal]:
        """Ranked continuations of each source's live hypotheses (a forced token is the
        loop's: `forced_proposals`)."""
        ...


OneSource = Callable[[torch.Tensor, torch.Tensor], Proposal]


def per_source(one: OneSource, step: Rows) -> list[Proposal]:
    """`one` on each source's rows in turn: (its log_probs (n, V), its scores (n,))."""
    if len(step.sizes) == 1:  # one source: its rows are all of them
        return [one(step.log_probs, step.scores)]
    out, start = [], 0
    for n in step.sizes:
        out.append(one(step.log_probs[start : start + n], step.scores[start : start + n]))
        start += n
    return out


def forced_proposals(step: Rows, token: int) -> list[Proposal]:
    """Every live hypothesis of every source takes the forced token."""
    return per_source(lambda lp, s: forced_proposal(lp, s, token), step)


def forced_proposal(log_probs: torch.Tensor, scores: torch.Tensor, token: int) -> Proposal:
    """Every live hypothesis takes the forced token; ranked by the score that gives."""
    logprobs = log_probs[:, token]  # (B,)
    order = (scores + logprobs).argsort(descending=True, stable=True)  # (B,)
    return Proposal(order.tolist(), [token] * len(order))
