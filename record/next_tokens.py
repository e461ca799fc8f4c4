"""A decoder-only model's likeliest next tokens at each position of its input (docs/app.md,
Explore): k tokens and their probabilities per position, so it grows as k × T, never T × V."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlens.record.errors import InputError


@dataclass(frozen=True)
class NextTokens:
    """Position i holds the k tokens the model rates likeliest to follow tokens[: i + 1], most
    probable first, with the softmax probability of each (§3.4, the output softmax)."""

    tokens: tuple[str, ...]  # (T,) the input as the model read it, its start token first
    top_ids: np.ndarray  # (T, k) int64: vocabulary ids
    top_tokens: tuple[tuple[str, ...], ...]  # (T, k) the model's own token strings
    top_probs: np.ndarray  # (T, k) float32, each row descending

    def __post_init__(self) -> None:
        T = len(self.tokens)
        if self.top_ids.ndim != 2 or self.top_ids.shape[0] != T:
            raise InputError(f"top_ids has shape {self.top_ids.shape}, not ({T}, k)")
        if self.top_probs.shape != self.top_ids.shape:
            raise InputError(
                f"top_probs has shape {self.top_probs.shape} but top_ids {self.top_ids.shape}"
            )
        k = self.top_ids.shape[1]
        if len(self.top_tokens) != T or any(len(row) != k for row in self.top_tokens):
            raise InputError(f"top_tokens must hold {k} token strings for each of {T} positions")

    @property
    def k(self) -> int:
        """How many next tokens each position holds."""
        return int(self.top_ids.shape[1])
