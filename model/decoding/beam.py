"""Beam search with the GNMT length penalty (Wu et al. 2016, §7)."""

from __future__ import annotations

import torch

from model.decoding.strategy import Proposal, forced_proposal


def length_penalty(length: int, alpha: float) -> float:
    """GNMT: lp(Y) = ((5 + |Y|) / 6)^α; α = 0 gives 1, i.e. no penalty."""
    return float(((5 + length) / 6) ** alpha)


def rank_score(score: float, length: int, alpha: float) -> float:
    """What finished hypotheses are ranked by: log P(Y) / lp(Y)."""
    return score / length_penalty(length, alpha)


def best_possible(score: float, max_len: int, alpha: float) -> float:
    """The highest rank score any continuation of a live hypothesis could still reach.

    Log-probabilities only add negatives, so log P stays ≤ score; for α ≥ 0 dividing a negative
    log P by the largest penalty, at max_len, gives the upper bound.
    """
    return rank_score(score, max_len, alpha) if score < 0 else 0.0


class BeamSearch:
    """Keep the K best prefixes by log-probability; propose the 2K best continuations so that
    K survive even when some of them end."""

    def __init__(self, beam_size: int) -> None:
        self.beam_size = beam_size

    def propose(
        self, log_probs: torch.Tensor, scores: torch.Tensor, forced: int | None
    ) -> Proposal:
        """The 2K best (hypothesis, token) pairs by cumulative log-probability."""
        if forced is not None:
            return forced_proposal(log_probs, scores, forced)
        B, V = log_probs.shape
        total = (scores.unsqueeze(1) + log_probs).view(-1)  # (B * V,)
        best = total.topk(min(2 * self.beam_size, B * V))  # sorted, best first
        index = best.indices[best.values.isfinite()]  # banned tokens (-inf) are not continuations
        parents = torch.div(index, V, rounding_mode="floor")  # (2K,)
        tokens = index % V  # (2K,)
        logprobs = log_probs[parents, tokens]  # (2K,)
        return Proposal(parents.tolist(), tokens.tolist(), logprobs.tolist())
