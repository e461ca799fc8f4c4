"""The parts an encoder or decoder layer is built from (§3.1, §3.3, §3.4)."""

from __future__ import annotations

import math

import torch
from torch import nn

from model.attention import KV, MultiHeadAttention


class FeedForward(nn.Module):
    """§3.3: FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position alike."""

    def __init__(self, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.w_2(self.dropout(self.w_1(x).relu()))  # (B, T, d_model)
        return out


class Embeddings(nn.Module):
    """§3.4: learned embeddings multiplied by √d_model."""

    def __init__(self, vocab: int, d_model: int) -> None:
        super().__init__()
        self.lut = nn.Embedding(vocab, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.lut(tokens) * self.scale  # (B, T, d_model)
        return out


class AddNorm(nn.Module):
    """§3.1: LayerNorm(x + Dropout(Sublayer(x))), the post-norm residual of the paper."""

    def __init__(self, d_model: int, dropout: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, sublayer_out: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.norm(x + self.dropout(sublayer_out))
        return out


class SelfAttentionLayer(nn.Module):
    """The parts of a layer with two sublayers (§3.1): self-attention and feed-forward, each
    in Add & Norm. The encoder's layer and the decoder-only model's causal layer differ only
    in how they run them."""

    def __init__(self, d_model: int, h: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.sublayer = nn.ModuleList([AddNorm(d_model, dropout) for _ in range(2)])


class EncoderLayer(SelfAttentionLayer):
    """§3.1: self-attention, then feed-forward, each wrapped in Add & Norm."""

    def forward(
        self, x: torch.Tensor, src_mask: torch.Tensor, head_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns the new states (B, S, d_model) and the self-attention (B, h, S, S)."""
        attended, weights = self.self_attn(x, self.self_attn.project_kv(x), src_mask, head_mask)
        x = self.sublayer[0](x, attended)
        return self.sublayer[1](x, self.feed_forward(x)), weights


class DecoderLayer(nn.Module):
    """§3.1: masked self-attention, attention over the encoder's memory, feed-forward."""

    def __init__(self, d_model: int, h: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h)
        self.src_attn = MultiHeadAttention(d_model, h)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.sublayer = nn.ModuleList([AddNorm(d_model, dropout) for _ in range(3)])

    def forward(
        self,
        x: torch.Tensor,
        memory_kv: KV,
        src_mask: torch.Tensor,
        tgt_mask: torch.Tensor,
        past: KV | None = None,
        head_mask: torch.Tensor | None = None,
        src_head_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, KV]:
        """x holds only the new positions when past carries the earlier keys and values.

        Returns states (B, T, d_model), self-attention (B, h, T, T_past+T), cross-attention
        (B, h, T, S) and the self-attention keys/values up to now (the cache for the next step).
        """
        k, v = self.self_attn.project_kv(x)  # (B, h, T, d_k) ×2
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        attended, self_w = self.self_attn(x, (k, v), tgt_mask, head_mask)
        x = self.sublayer[0](x, attended)
        attended, cross_w = self.src_attn(x, memory_kv, src_mask, src_head_mask)
        x = self.sublayer[1](x, attended)
        return self.sublayer[2](x, self.feed_forward(x)), self_w, cross_w, (k, v)
