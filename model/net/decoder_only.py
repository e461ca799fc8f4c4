"""A decoder-only Transformer: the §3 decoder stack without the encoder-decoder sublayer.

Each layer is masked self-attention then feed-forward, each in the paper's Add & Norm; the
embeddings, sinusoidal positions and tied pre-softmax projection are those of §3.4-3.5. It is
what the bundled character language model `lm` is built from.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnlens.model.net.attention import KV, QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.layers import Embeddings, SelfAttentionLayer
from attnlens.model.net.positional import rows, sinusoidal_encoding


class CausalLayer(SelfAttentionLayer):
    """Masked self-attention and feed-forward, each wrapped in Add & Norm (§3.1)."""

    def forward(
        self,
        x: torch.Tensor,
        tgt_mask: torch.Tensor,
        past: KV | None = None,
        head_mask: torch.Tensor | None = None,
        keep_qkv: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, KV, QKV | None]:
        """States (B, T, d_model), self-attention (B, h, T, T_past + T), keys/values so far,
        and with keep_qkv the Q, K, V the attention used."""
        k, v = self.self_attn.project_kv(x)  # (B, h, T, d_k) ×2
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        att = self.self_attn(x, (k, v), tgt_mask, head_mask, keep_qkv)
        x = self.sublayer[0](x, att.output)
        return self.sublayer[1](x, self.feed_forward(x)), att.weights, (k, v), att.qkv


@dataclass(frozen=True)
class CausalOutput:
    """What the stack produced for the positions it was given."""

    hidden: torch.Tensor  # (B, T, d_model)
    self_attention: torch.Tensor  # (N, B, h, T, T_past + T)
    cache: list[KV]  # per layer: self-attention keys/values of every position so far
    qkv: list[QKV] | None = None  # per layer, with keep_qkv: what its attention used


class DecoderOnlyTransformer(nn.Module):
    """N causal layers over shared embeddings; `tgt_vocab` is the only vocabulary used."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = c = config
        self.tgt_embed = Embeddings(c.tgt_vocab, c.d_model)
        self.register_buffer("pe", sinusoidal_encoding(c.max_len, c.d_model), persistent=False)
        self.dropout = nn.Dropout(c.dropout)
        self.layers = nn.ModuleList(
            CausalLayer(c.d_model, c.h, c.d_ff, c.dropout) for _ in range(c.N)
        )
        self.generator = nn.Linear(c.d_model, c.tgt_vocab)
        self.generator.weight = self.tgt_embed.lut.weight  # §3.4: shared with the embedding
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def positional(self, start: int, length: int) -> torch.Tensor:
        """The encoding added at positions start..start+length-1, (length, d_model)."""
        return rows(self.pe, start, length)  # type: ignore[arg-type]

    def decode(
        self,
        tokens: torch.Tensor,
        tgt_mask: torch.Tensor,
        cache: list[KV] | None = None,
        head_mask: torch.Tensor | None = None,
        keep_qkv: bool = False,
    ) -> CausalOutput:
        """Run tokens (B, T); with a cache, tokens are only the positions after the cached ones.

        head_mask (N, h) multiplies each head's output; 0 ablates it.
        """
        start = 0 if cache is None else cache[0][0].size(2)
        x = self.dropout(self.tgt_embed(tokens) + self.positional(start, tokens.size(1)))
        weights, new_cache, qkvs = [], [], []
        for i, layer in enumerate(self.layers):
            past = None if cache is None else cache[i]
            mask = None if head_mask is None else head_mask[i]
            x, w, kv, qkv = layer(x, tgt_mask, past, mask, keep_qkv)
            weights.append(w)
            new_cache.append(kv)
            qkvs.append(qkv)
        return CausalOutput(x, torch.stack(weights), new_cache, qkvs if keep_qkv else None)

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """Linear then log-softmax over the vocabulary, (B, T, V)."""
        out: torch.Tensor = self.generator(hidden).log_softmax(dim=-1)
        return out

    def forward(self, tokens: torch.Tensor, tgt_mask: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of the next token at every position, (B, T, V)."""
        return self.log_probs(self.decode(tokens, tgt_mask).hidden)
