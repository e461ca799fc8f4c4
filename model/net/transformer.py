"""The encoder-decoder Transformer of §3, returning its attention by value."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnlens.model.net.attention import KV, QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.layers import DecoderLayer, Embeddings, EncoderLayer
from attnlens.model.net.positional import rows, sinusoidal_encoding


@dataclass(frozen=True)
class HeadMask:
    """Per-head multipliers (N, h) for each kind of attention; 0 ablates a head's output."""

    encoder: torch.Tensor | None = None
    decoder: torch.Tensor | None = None
    cross: torch.Tensor | None = None


@dataclass(frozen=True)
class Encoded:
    """What the encoder produced for a batch of sources."""

    memory: torch.Tensor  # (B, S, d_model)
    attention: torch.Tensor  # (N, B, h, S, S)
    qkv: list[QKV] | None = None  # per layer, with keep_qkv: what its self-attention used


@dataclass(frozen=True)
class Decoded:
    """What the decoder produced for the positions it was given."""

    hidden: torch.Tensor  # (B, T, d_model)
    self_attention: torch.Tensor  # (N, B, h, T, T_past + T)
    cross_attention: torch.Tensor  # (N, B, h, T, S)
    cache: list[KV]  # per layer: self-attention keys/values of every position so far
    self_qkv: list[QKV] | None = None  # per layer, with keep_qkv: what each attention used
    cross_qkv: list[QKV] | None = None


def _layer(mask: torch.Tensor | None, i: int) -> torch.Tensor | None:
    return None if mask is None else mask[i]


class Transformer(nn.Module):
    """Encoder and decoder stacks (§3.1) with embeddings, positional encoding and generator."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = c = config
        self.src_embed = Embeddings(c.src_vocab, c.d_model)
        self.tgt_embed = (
            self.src_embed if c.share_embeddings else Embeddings(c.tgt_vocab, c.d_model)
        )
        self.register_buffer("pe", sinusoidal_encoding(c.max_len, c.d_model), persistent=False)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = nn.ModuleList(
            EncoderLayer(c.d_model, c.h, c.d_ff, c.dropout) for _ in range(c.N)
        )
        self.decoder = nn.ModuleList(
            DecoderLayer(c.d_model, c.h, c.d_ff, c.dropout) for _ in range(c.N)
        )
        self.generator = nn.Linear(c.d_model, c.tgt_vocab)
        if c.share_embeddings:  # §3.4: the pre-softmax projection shares the embedding matrix
            self.generator.weight = self.tgt_embed.lut.weight
        self._init_weights()

    def _init_weights(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def decoder_layers(self) -> list[DecoderLayer]:
        return [layer for layer in self.decoder if isinstance(layer, DecoderLayer)]

    def positional(self, start: int, length: int) -> torch.Tensor:
        """The encoding added at positions start..start+length-1, (length, d_model)."""
        return rows(self.pe, start, length)  # type: ignore[arg-type]

    def encode(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor,
        head_mask: HeadMask | None = None,
        keep_qkv: bool = False,
    ) -> Encoded:
        """Run the encoder once over src (B, S) with src_mask (B, 1, S)."""
        x = self.dropout(self.src_embed(src) + self.positional(0, src.size(1)))  # (B, S, d_model)
        weights, qkvs = [], []
        for i, layer in enumerate(self.encoder):
            mask = _layer(None if head_mask is None else head_mask.encoder, i)
            x, w, qkv = layer(x, src_mask, mask, keep_qkv)
            weights.append(w)
            qkvs.append(qkv)
        return Encoded(x, torch.stack(weights), qkvs if keep_qkv else None)

    def memory_kv(self, memory: torch.Tensor) -> list[KV]:
        """Each decoder layer's keys and values of the memory, computed once per source."""
        return [layer.src_attn.project_kv(memory) for layer in self.decoder_layers()]

    def decode(
        self,
        memory_kv: list[KV],
        src_mask: torch.Tensor,
        tgt: torch.Tensor,
        tgt_mask: torch.Tensor,
        cache: list[KV] | None = None,
        head_mask: HeadMask | None = None,
        keep_qkv: bool = False,
    ) -> Decoded:
        """Decode tgt (B, T); with a cache, tgt holds only the positions after the cached ones."""
        start = 0 if cache is None else cache[0][0].size(2)
        x = self.dropout(
            self.tgt_embed(tgt) + self.positional(start, tgt.size(1))
        )  # (B, T, d_model)
        outs = []
        for i, layer in enumerate(self.decoder_layers()):
            out = layer(
                x,
                memory_kv[i],
                src_mask,
                tgt_mask,
                None if cache is None else cache[i],
                _layer(None if head_mask is None else head_mask.decoder, i),
                _layer(None if head_mask is None else head_mask.cross, i),
                keep_qkv,
            )
            x = out.hidden
            outs.append(out)
        return Decoded(
            x,
            torch.stack([o.self_attention for o in outs]),  # (N, B, h, T, T_past + T)
            torch.stack([o.cross_attention for o in outs]),  # (N, B, h, T, S)
            [o.cache for o in outs],
            [o.self_qkv for o in outs] if keep_qkv else None,  # type: ignore[misc]
            [o.cross_qkv for o in outs] if keep_qkv else None,  # type: ignore[misc]
        )

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """The generator: linear then log-softmax over the target vocabulary, (B, T, V)."""
        out: torch.Tensor = self.generator(hidden).log_softmax(dim=-1)
        return out

    def forward(
        self, src: torch.Tensor, tgt: torch.Tensor, src_mask: torch.Tensor, tgt_mask: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced log-probabilities of the next token at every target position."""
        encoded = self.encode(src, src_mask)
        decoded = self.decode(self.memory_kv(encoded.memory), src_mask, tgt, tgt_mask)
        return self.log_probs(decoded.hidden)  # (B, T, V)
