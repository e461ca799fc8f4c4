"""The Transformer's hyper-parameters as one frozen dataclass (§3, Table 3)."""

from __future__ import annotations

import dataclasses
import json
import numbers
from dataclasses import dataclass
from typing import Any

SIZES = ("src_vocab", "tgt_vocab", "N", "d_model", "d_ff", "h", "max_len")


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of an encoder-decoder Transformer; names follow the paper."""

    src_vocab: int
    tgt_vocab: int
    N: int = 6  # layers in each stack
    d_model: int = 512
    d_ff: int = 2048
    h: int = 8  # attention heads
    dropout: float = 0.1
    max_len: int = 512  # longest sequence the positional table covers
    share_embeddings: bool = True  # §3.4: one matrix for both embeddings and the pre-softmax

    def __post_init__(self) -> None:
        for name in SIZES:
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        dropout = self.dropout
        if (
            not isinstance(dropout, numbers.Real)
            or isinstance(dropout, bool)
            or not 0 <= dropout < 1
        ):
            raise ValueError(f"dropout must be a number from 0 up to 1, got {dropout!r}")
        if not isinstance(self.share_embeddings, bool):
            raise ValueError(
                f"share_embeddings must be true or false, got {self.share_embeddings!r}"
            )
        if self.d_model % self.h:
            raise ValueError(f"d_model={self.d_model} is not divisible by h={self.h}")
        if self.share_embeddings and self.src_vocab != self.tgt_vocab:
            raise ValueError(
                f"shared embeddings need one vocabulary, got {self.src_vocab} and {self.tgt_vocab}"
            )

    @property
    def d_k(self) -> int:
        """Width of one head's queries and keys (§3.2.2: d_k = d_v = d_model / h)."""
        return self.d_model // self.h

    @classmethod
    def base(cls, vocab: int = 37000) -> TransformerConfig:
        """Table 3, 'base': N=6, d_model=512, d_ff=2048, h=8, dropout 0.1 (65M parameters)."""
        return cls(src_vocab=vocab, tgt_vocab=vocab)

    @classmethod
    def big(cls, vocab: int = 37000) -> TransformerConfig:
        """Table 3, 'big': N=6, d_model=1024, d_ff=4096, h=16, dropout 0.3 (213M parameters)."""
        return cls(vocab, vocab, d_model=1024, d_ff=4096, h=16, dropout=0.3)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TransformerConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown TransformerConfig fields: {sorted(unknown)}")
        return cls(**data)
