"""Sampling with temperature, top-k and top-p (nucleus, Holtzman et al. 2020), seeded."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnlens.model.decoding.strategy import Proposal, forced_proposals, per_source


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k highest logits of each row (ties at the k-th kept); the rest become -inf."""
    if k >= logits.size(-1):
        return logits
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (B, 1)
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of most probable tokens whose probability reaches p; -inf the tail.

    A token is kept when the probability of the tokens ranked above it is still below p.
    """
    if p >= 1.0:
        return logits
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)  # (B, V) ×2
    above = probs.cumsum(dim=-1) - probs  # (B, V): probability ranked strictly above each token
    drop_sorted = above >= p  # (B, V)
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # (B, V), vocab order
    return logits.masked_fill(drop, float("-inf"))


class Sampling:
    """Draw the next token from softmax(logits / T), filtered by top-k then top-p."""

    def __init__(
        self,
        temperature: float,
        top_k: int | None,
        top_p: float | None,
        seed: int,
    ) -> None:
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p
        # one generator per run, seeded once: the run replays from its seed. It lives on the
        # CPU whatever the model's device, so a seed draws the same tokens on a GPU as on the CPU
        self.generator = torch.Generator().manual_seed(seed)

    def distribution(self, log_probs: torch.Tensor) -> torch.Tensor:
        """The probabilities actually sampled from, (B, V)."""
        logits = log_probs / self.temperature  # (B, V)
        if self.top_k is not None:
            logits = top_k_filter(logits, self.top_k)
        if self.top_p is not None:
            logits = top_p_filter(logits, self.top_p)
        return logits.softmax(dim=-1)

    def propose(
        self,
        log_probs: torch.Tensor,
        scores: torch.Tensor,
        sizes: Sequence[int],
        forced: int | None,
    ) -> list[Proposal]:
        """One token drawn for each source's single live hypothesis (or the forced one), the
        sources in turn from the run's one generator."""
        if forced is not None:
            return forced_proposals(log_probs, scores, sizes, forced)
        return per_source(self.draw, log_probs, scores, sizes)

    def draw(self, log_probs: torch.Tensor, scores: torch.Tensor) -> Proposal:
        """One token drawn for a source's live hypothesis, its row of log_probs (1, V)."""
        probs = self.distribution(log_probs[:1])  # (1, V)
        token = int(torch.multinomial(probs.cpu(), 1, generator=self.generator))
        return Proposal([0], [token])
