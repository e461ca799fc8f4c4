"""Beam search, ranked by a length-normalised score: the GNMT length penalty (Wu et al. 2016,
§7) on our models, `generate`'s |Y|^α on Hugging Face models, so each decodes as its own does."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnlens.model.decoding.request import EarlyStopping, LengthNorm
from attnlens.model.decoding.strategy import Proposal, forced_proposals, per_source


def length_penalty(length: int, alpha: float, norm: LengthNorm = "gnmt") -> float:
    """GNMT: lp(Y) = ((5 + |Y|) / 6)^α; power: |Y|^α. α = 0 gives 1, i.e. no penalty."""
    if norm == "power":
        return float(length**alpha)
    return float(((5 + length) / 6) ** alpha)


def rank_score(score: float, length: int, alpha: float, norm: LengthNorm = "gnmt") -> float:
    """What finished hypotheses are ranked by: log P(Y) / lp(Y)."""
    return score / length_penalty(length, alpha, norm)


def best_possible(
    score: float,
    length: int,
    max_len: int,
    alpha: float,
    norm: LengthNorm = "gnmt",
    early_stopping: EarlyStopping = False,
) -> float:
    """The highest rank score a live hypothesis of `length` tokens could still reach.

    GNMT: log-probabilities only add negatives, so log P stays ≤ score; for α ≥ 0 dividing a
    negative log P by the largest penalty, at max_len, gives a true upper bound. Power (as
    `generate`): its heuristic, the score at the current length, or at max_len when
    early_stopping is "never" and α > 0.
    """
    if norm == "power":
        at = max_len if early_stopping == "never" and alpha > 0 else length
        return rank_score(score, at, alpha, norm)
    return rank_score(score, max_len, alpha) if score < 0 else 0.0


class BeamSearch:
    """Keep the K best prefixes by log-probability; propose the 2K best continuations so that
    K survive even when some of them end."""

    def __init__(self, beam_size: int) -> None:
        self.beam_size = beam_size

    def propose(
        self,
        log_probs: torch.Tensor,
        scores: torch.Tensor,
        sizes: Sequence[int],
        forced: int | None,
    ) -> list[Proposal]:
        """Each source's 2K best (hypothesis, token) pairs by cumulative log-probability."""
        if forced is not None:
            return forced_proposals(log_probs, scores, sizes, forced)
        return per_source(self.best, log_probs, scores, sizes)

    def best(self, log_probs: torch.Tensor, scores: torch.Tensor) -> Proposal:
        """One source's 2K best continuations: log_probs (B, V), scores (B,)."""
        B, V = log_probs.shape
        total = (scores.unsqueeze(1) + log_probs).view(-1)  # (B * V,)
        best = total.topk(min(2 * self.beam_size, B * V))  # sorted, best first
        index = best.indices[best.values.isfinite()]  # banned tokens (-inf) are not continuations
        parents = torch.div(index, V, rounding_mode="floor")  # (2K,)
        tokens = index % V  # (2K,)
        return Proposal(parents.tolist(), tokens.tolist())
