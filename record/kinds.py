"""Which model a record comes from, and the kinds of attention each architecture has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

KINDS = ("encoder_self", "decoder_self", "cross")
Kind = Literal["encoder_self", "decoder_self", "cross"]
Architecture = Literal["encoder-decoder", "encoder", "decoder"]


def self_kind(architecture: str) -> Kind:
    """A decoder-only model's decoder self-attention, any other model's encoder's."""
    return "decoder_self" if architecture == "decoder" else "encoder_self"


def default_kind(architecture: str) -> Kind:
    """The one kind that stands for a model where none is named (the view a page opens on, a
    bare LAYER.HEAD): cross-attention where there is one, what the output looks at through;
    otherwise the model's own self-attention."""
    return "cross" if architecture == "encoder-decoder" else self_kind(architecture)


ARCHITECTURE_KINDS: dict[str, tuple[Kind, ...]] = {
    "encoder-decoder": ("encoder_self", "decoder_self", "cross"),
    "encoder": ("encoder_self",),
    "decoder": ("decoder_self",),
}
PositionalScheme = Literal["sinusoidal", "learned", "rotary", "alibi", "relative", "none"]


@dataclass(frozen=True)
class ModelInfo:
    """Which model produced a record: n_layers × n_heads of its encoder (or its only stack),
    and of its decoder when that differs (decoder self- and cross-attention live there)."""

    name: str
    architecture: Architecture
    n_layers: int
    n_heads: int
    d_model: int
    decoder_layers: int | None = None  # None: the same as n_layers
    decoder_heads: int | None = None  # None: the same as n_heads
    # key/value heads a decoder-only model's layers share among their query heads (grouped-query
    # attention: query head h reads key head h // (n_heads // kv_heads)); None: one per query head
    kv_heads: int | None = None

    @property
    def kinds(self) -> tuple[Kind, ...]:
        """The kinds of attention this architecture has, in the record's order."""
        return ARCHITECTURE_KINDS[self.architecture]

    @property
    def self_kind(self) -> Kind:
        """The self-attention of the stack that reads the text: a decoder-only model's
        decoder, any other model's encoder."""
        return self_kind(self.architecture)

    @property
    def default_kind(self) -> Kind:
        """The kind a view opens on, and a bare LAYER.HEAD names (default_kind)."""
        return default_kind(self.architecture)

    def shape(self, kind: Kind) -> tuple[int, int]:
        """(layers, heads) of one kind of attention."""
        if kind == "encoder_self":
            return self.n_layers, self.n_heads
        return self.decoder_layers or self.n_layers, self.decoder_heads or self.n_heads

    def to_dict(self) -> dict[str, Any]:
        """The record's "model" object; the decoder's sizes only when they differ."""
        return {k: v for k, v in self.__dict__.items() if v is not None}
