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


LOGPROB_ROWS = 256  # positions whose log-softmax over the vocabulary is held at once


def next_token_logprobs(logits: torch.Tensor, next_ids: Sequence[int]) -> np.ndarray:
    """(T,) natural-log probability at each position of the token that follows it, a block of
    positions at a time (a long input's T × V log-softmax would be as large as its logits)."""
    index = torch.tensor(list(next_ids), device=logits.device).unsqueeze(-1)  # (T, 1)
    parts = [
        torch.log_softmax(logits[0, i : i + LOGPROB_ROWS].float(), dim=-1).gather(
            -1, index[i : i + LOGPROB_ROWS]
        )  # (rows, 1)
        for i in range(0, index.size(0), LOGPROB_ROWS)
    ]
    return torch.cat(parts).squeeze(-1).cpu().numpy().copy()  # (T,)
