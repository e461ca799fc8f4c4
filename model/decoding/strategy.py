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


class Strategy(Protocol):
    """Greedy, beam search and sampling: one `propose` each, one step loop for all."""

    def propose(
        self,
        log_probs: torch.Tensor,
        scores: torch.Tensor,
        sizes: Sequence[int],
        forced: int | None,
    ) -> list[Proposal]:
        """Ranked continuations of each source's live hypotheses. log_probs (R, V) are the
        step's (processed) scores of every live row, the sources' rows one after another,
        `sizes` rows each; scores (R,) what each row has summed so far."""
        ...


OneSource = Callable[[torch.Tensor, torch.Tensor], Proposal]


def per_source(
    one: OneSource, log_probs: torch.Tensor, scores: torch.Tensor, sizes: Sequence[int]
) -> list[Proposal]:
    """`one` on each source's rows in turn: (its log_probs (n, V), its scores (n,))."""
    if len(sizes) == 1:  # one source: its rows are all of them
        return [one(log_probs, scores)]
    out, start = [], 0
    for n in sizes:
        out.append(one(log_probs[start : start + n], scores[start : start + n]))
        start += n
    return out


def forced_proposals(
    log_probs: torch.Tensor, scores: torch.Tensor, sizes: Sequence[int], token: int
) -> list[Proposal]:
    """Every live hypothesis of every source takes the forced token."""
    return per_source(lambda lp, s: forced_proposal(lp, s, token), log_probs, scores, sizes)


def forced_proposal(log_probs: torch.Tensor, scores: torch.Tensor, token: int) -> Proposal:
    """Every live hypothesis takes the forced token; ranked by the score that gives."""
    logprobs = log_probs[:, token]  # (B,)
    order = (scores + logprobs).argsort(descending=True, stable=True)  # (B,)
    return Proposal(order.tolist(), [token] * len(order))
