"""Greedy decoding's choice, written once: the argmax of the processed scores (`pick` on
`choice_scores`), for every source of a step at once. The step loop (`loop.py`) runs it, with
every step recorded (the Decode page, `attnlens decode`) or nothing (a trace's output, `attnlens
eval`, the experiments' task scores), so all of them see the same tokens for the same settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from attnlens.model.decoding.stepper import StepOutput
from attnlens.model.decoding.strategy import Proposal, forced_proposals
from attnlens.model.decoding.vocabulary import Vocabulary


def choice_scores(out: StepOutput[Any], ids: torch.Tensor, vocab: Vocabulary) -> torch.Tensor:
    """What greedy and sampling choose from: the bans and processors on the raw logits when the
    model gives them (as `generate` does), else on its log-probabilities; ids (B, P + t)."""
    return vocab.process(ids, out.log_probs if out.logits is None else out.logits)  # (B, V)


def pick(scores: torch.Tensor) -> torch.Tensor:
    """The greedy choice of each row of scores (B, V): its best-scoring token."""
    return scores.argmax(dim=-1)  # (B,)


class Greedy:
    """Each source's one live hypothesis continues with its best-scoring token."""

    def propose(
        self,
        log_probs: torch.Tensor,
        scores: torch.Tensor,
        sizes: Sequence[int],
        forced: int | None,
    ) -> list[Proposal]:
        """The argmax of each source's single live row (or the forced token): one argmax over
        every row of the step."""
        if forced is not None:
            return forced_proposals(log_probs, scores, sizes, forced)
        picks = pick(log_probs).tolist()  # (R,)
        out, start = [], 0
        for n in sizes:
            out.append(Proposal([0], [picks[start]]))
            start += n
        return out
