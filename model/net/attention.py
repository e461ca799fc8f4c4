"""Scaled dot-product and multi-head attention (§3.2), returning the weights they used."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

KV = tuple[torch.Tensor, torch.Tensor]  # keys, values: (B, h, S, d_k) each


@dataclass(frozen=True)
class QKV:
    """One layer's per-head queries, keys and values, as its attention used them."""

    q: torch.Tensor  # (B, h, T, d_k)
    k: torch.Tensor  # (B, h, S, d_k)
    v: torch.Tensor  # (B, h, S, d_k)


@dataclass(frozen=True)
class Attended:
    """What multi-head attention returns: its output, its weights and, when asked, Q, K, V."""

    output: torch.Tensor  # (B, T, d_model)
    weights: torch.Tensor  # (B, h, T, S)
    qkv: QKV | None = None


def attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """§3.2.1: softmax(QKᵀ/√d_k) V. Masked entries get -inf, so their weight is exactly 0."""
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # (B, h, T_q, T_k)
    return weights @ value, weights  # (B, h, T_q, d_k), (B, h, T_q, T_k)


class MultiHeadAttention(nn.Module):
    """§3.2.2: h heads of width d_k = d_model / h, concatenated and projected by W^O."""

    def __init__(self, d_model: int, h: int) -> None:
        super().__init__()
        if d_model % h:
            raise ValueError(f"d_model={d_model} is not divisible by h={h}")
        self.h, self.d_k = h, d_model // h
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, h, T, d_k)."""
        return x.view(x.size(0), x.size(1), self.h, self.d_k).transpose(1, 2)

    def project_kv(self, x: torch.Tensor) -> KV:
        """Keys and values of x, computed once and reusable across decoding steps."""
        return self.split_heads(self.w_k(x)), self.split_heads(self.w_v(x))  # (B, h, S, d_k) ×2

    def forward(
        self,
        x: torch.Tensor,
        kv: KV,
        mask: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        keep_qkv: bool = False,
    ) -> Attended:
        """Queries from x (B, T, d_model) attend over kv; head_mask (h,) scales each head, or
        (B, h) each head of each row (the experiments' ablations, batched).
        With keep_qkv, the per-head Q, K and V that were used come back too."""
        q = self.split_heads(self.w_q(x))  # (B, h, T, d_k)
        mask = mask.unsqueeze(1) if mask is not None else None  # (B, 1, T, S): same for all heads
        heads, weights = attention(q, kv[0], kv[1], mask)  # (B, h, T, d_k), (B, h, T, S)
        if head_mask is not None:
            heads = heads * head_mask.view(-1 if head_mask.dim() > 1 else 1, self.h, 1, 1)
        concat = heads.transpose(1, 2).reshape(
            x.size(0), x.size(1), self.h * self.d_k
        )  # (B, T, d_model)
        qkv = QKV(q, kv[0], kv[1]) if keep_qkv else None
        return Attended(self.w_o(concat), weights, qkv)
