"""Positional information as the model added it: rows of its absolute position table, or a
plain statement that a relative scheme cannot be shown as one table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from transformers import PretrainedConfig

RELATIVE = "relative position scheme: not shown"
TABLE_NAMES = ("position_embeddings", "embed_positions", "wpe")


@dataclass(frozen=True)
class PositionTable:
    """An absolute position table (learned or sinusoidal): position p reads row offset + p."""

    name: str
    weight: torch.Tensor  # (rows, d_model)
    offset: int

    @property
    def positions(self) -> int:
        """How many positions the table covers."""
        return int(self.weight.size(0)) - self.offset

    def rows(self, count: int) -> np.ndarray:
        """The (count, d_model) rows that positions 0..count-1 added to the embeddings."""
        used = self.weight[self.offset : self.offset + count]  # (count, d_model)
        return used.detach().float().cpu().numpy().copy()


def _offset(module: nn.Embedding) -> int:
    """BART-style tables skip `offset` rows; RoBERTa-style ones start after the padding row."""
    offset = getattr(module, "offset", None)
    if isinstance(offset, int):
        return offset
    return 0 if module.padding_idx is None else int(module.padding_idx) + 1


def position_tables(model: nn.Module, config: PretrainedConfig) -> list[PositionTable]:
    """Absolute position tables in module order (encoder's first); empty for relative schemes."""
    scheme = getattr(config.get_text_config(), "position_embedding_type", "absolute")
    if scheme not in (None, "absolute"):
        return []
    return [
        PositionTable(name, module.weight, _offset(module))
        for name, module in model.named_modules()
        if isinstance(module, nn.Embedding) and name.rsplit(".", 1)[-1] in TABLE_NAMES
    ]


def relative_kind(model: nn.Module, config: PretrainedConfig) -> str | None:
    """A short name of the model's relative position scheme, or None when it shows none."""
    text = config.get_text_config()
    scheme = getattr(text, "position_embedding_type", None)
    if scheme not in (None, "absolute"):
        return str(scheme)
    names = " ".join(name for name, _ in model.named_modules())
    if "rotary" in names or getattr(text, "rope_theta", None) is not None:
        return "rotary"
    if "relative_attention_bias" in names:
        return "learned relative attention bias"
    return None


@dataclass(frozen=True)
class Positions:
    """The model's absolute position tables (encoder's first), or the relative scheme it uses."""

    tables: tuple[PositionTable, ...]
    relative: str | None

    @classmethod
    def of(cls, model: nn.Module, config: PretrainedConfig) -> Positions:
        tables = tuple(position_tables(model, config))
        return cls(tables, None if tables else relative_kind(model, config))

    @property
    def limit(self) -> int | None:
        """How many positions every table covers, or None without tables."""
        return min((t.positions for t in self.tables), default=None)

    def encoding(self, count: int) -> tuple[np.ndarray | None, list[str]]:
        """The (count, d_model) rows added to the embeddings, and warnings on what is not shown."""
        if not self.tables and self.relative is not None:
            return None, [f"{RELATIVE} ({self.relative})"]
        if not self.tables:
            return None, ["no absolute position table found: not shown"]
        first = self.tables[0].rows(count)
        others = [t.name for t in self.tables[1:] if not np.array_equal(t.rows(count), first)]
        if others:
            return first, [
                f"positional_encoding shows {self.tables[0].name}; {', '.join(others)} "
                "add their own position table"
            ]
        return first, []
