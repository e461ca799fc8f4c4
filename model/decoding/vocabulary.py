"""How decoding names tokens, where a sequence ends, and what may change a step's scores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from attnlens.model.decoding.processors import Processor, TokenBan, apply


@dataclass(frozen=True)
class Vocabulary:
    """How the loop names tokens, where a hypothesis ends, and what may change the scores."""

    names: Sequence[str]  # token id -> token string
    eos_id: int
    detokenize: Callable[[Sequence[int]], str]
    banned: tuple[int, ...] = ()  # never chosen nor listed as candidates, unless forced
    processors: tuple[Processor, ...] = ()  # after the bans (a model's generation config)
    also_end: tuple[int, ...] = ()  # further end tokens (a config may name several)

    @property
    def ends(self) -> frozenset[int]:
        return frozenset((self.eos_id, *self.also_end))

    def process(self, ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """The bans, then every processor, on scores (B, V) of the sequences ids (B, P + t)."""
        return apply((TokenBan(self.banned), *self.processors), ids, scores)
