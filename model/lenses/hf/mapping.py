"""From the model's own output tensors to the record's arrays (batch dimension dropped)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def stack_attention(per_layer: Sequence[torch.Tensor] | None) -> np.ndarray | None:
    """(L, H, Q, K) float32 from the model's L tensors of shape (1, H, Q, K), values untouched."""
    if not per_layer:
        return None
    stacked = torch.stack([layer[0] for layer in per_layer])  # (L, H, Q, K)
    return stacked.detach().float().cpu().numpy().copy()


def next_token_logprobs(logits: torch.Tensor, next_ids: Sequence[int]) -> np.ndarray:
    """(T,) natural-log probability at each position of the token that follows it."""
    logprobs = torch.log_softmax(logits[0].float(), dim=-1)  # (T, V)
    index = torch.tensor(list(next_ids), device=logits.device).unsqueeze(-1)  # (T, 1)
    return logprobs.gather(-1, index).squeeze(-1).cpu().numpy().copy()  # (T,)
