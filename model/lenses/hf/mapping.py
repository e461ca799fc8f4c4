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


def key_mask(attention_mask: torch.Tensor, queries: int) -> np.ndarray:
    """(Q, K) bool: every query may attend to every key the padding mask (1, K) keeps."""
    keys = attention_mask[0].bool().cpu().numpy()  # (K,)
    return np.broadcast_to(keys, (queries, keys.size)).copy()


def causal_mask(attention_mask: torch.Tensor, window: int | None = None) -> np.ndarray:
    """(T, T) bool: position i may attend to kept positions j ≤ i (§3.2.3 masking), and with a
    sliding window only to those with i - j < window."""
    size = int(attention_mask.size(-1))
    allowed: np.ndarray = np.tril(np.ones((size, size), dtype=np.bool_))  # (T, T)
    if window is not None:
        allowed &= np.triu(np.ones((size, size), dtype=np.bool_), k=1 - window)
    allowed &= key_mask(attention_mask, size)
    return allowed


def next_token_logprobs(logits: torch.Tensor, next_ids: Sequence[int]) -> np.ndarray:
    """(T,) natural-log probability at each position of the token that follows it."""
    logprobs = torch.log_softmax(logits[0].float(), dim=-1)  # (T, V)
    index = torch.tensor(list(next_ids), device=logits.device).unsqueeze(-1)  # (T, 1)
    return logprobs.gather(-1, index).squeeze(-1).cpu().numpy().copy()  # (T,)
