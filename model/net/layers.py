"""The parts an encoder or decoder layer is built from (§3.1, §3.3, §3.4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attnlens.model.net.attention import KV, QKV, MultiHeadAttention


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
        self,
        x: torch.Tensor,
        src_mask: torch.Tensor,
        head_mask: torch.Tensor | None = None,
        keep_qkv: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, QKV | None]:
        """The new states (B, S, d_model), the self-attention (B, h, S, S) and, with keep_qkv,
        the Q, K, V it used."""
        att = self.self_attn(x, self.self_attn.project_kv(x), src_mask, head_mask, keep_qkv)
        x = self.sublayer[0](x, att.output)
        return self.sublayer[1](x, self.feed_forward(x)), att.weights, att.qkv


@dataclass(frozen=True)
class DecoderLayerOut:
    """What one decoder layer returns for the positions it was given."""

    hidden: torch.Tensor  # (B, T, d_model)
    self_attention: torch.Tensor  # (B, h, T, T_past + T)
    cross_attention: torch.Tensor  # (B, h, T, S)
    cache: KV  # self-attention keys/values up to now: the cache for the next step
    self_qkv: QKV | None  # with keep_qkv: what each attention used
    cross_qkv: QKV | None


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
        keep_qkv: bool = False,
    ) -> DecoderLayerOut:
        """x holds only the new positions when past carries the earlier keys and values."""
        k, v = self.self_attn.project_kv(x)  # (B, h, T, d_k) ×2
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        own = self.self_attn(x, (k, v), tgt_mask, head_mask, keep_qkv)
        x = self.sublayer[0](x, own.output)
        cross = self.src_attn(x, memory_kv, src_mask, src_head_mask, keep_qkv)
        x = self.sublayer[1](x, cross.output)
        x = self.sublayer[2](x, self.feed_forward(x))
        return DecoderLayerOut(x, own.weights, cross.weights, (k, v), own.qkv, cross.qkv)
