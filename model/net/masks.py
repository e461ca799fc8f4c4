"""Attention masks (§3.2.3). True means 'this query may attend to this key'."""

from __future__ import annotations

import torch


def padding_mask(tokens: torch.Tensor, pad: int) -> torch.Tensor:
    """Keys that are real tokens, broadcast over queries: (B, 1, S) from (B, S)."""
    return (tokens != pad).unsqueeze(-2)  # (B, 1, S)


def subsequent_mask(size: int, device: torch.device | None = None) -> torch.Tensor:
    """Position i may attend to positions ≤ i, so predictions depend only on the past."""
    return torch.tril(torch.ones(size, size, dtype=torch.bool, device=device)).unsqueeze(
        0
    )  # (1, T, T)


def target_mask(tokens: torch.Tensor, pad: int) -> torch.Tensor:
    """Decoder self-attention mask: padding and the causal mask combined, (B, T, T)."""
    return padding_mask(tokens, pad) & subsequent_mask(tokens.size(-1), tokens.device)


def causal_mask(n: int, past: int, device: torch.device | None = None) -> torch.Tensor:
    """n new positions after past cached ones: new position i sees keys ≤ past + i."""
    ones = torch.ones(n, past + n, dtype=torch.bool, device=device)
    return ones.tril(diagonal=past).unsqueeze(0)  # (1, n, past + n)
