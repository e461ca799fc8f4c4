"""Positional information as the model applied it: the scheme it uses, and for an absolute
table the rows it added to each position's embedding, found from the input ids the way the
model finds them (RoBERTa-style tables skip padding tokens, so a typed <pad> shifts the rows).

Only an absolute table actually added to the embeddings goes in the record's
positional_encoding; rotary, ALiBi and relative schemes are named, not drawn as a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn
from transformers import PretrainedConfig

from attnlens.record.trace import PositionalScheme

TABLE_NAMES = ("position_embeddings", "embed_positions", "wpe")
BUFFER_NAMES = ("pos_encoding",)  # CTRL keeps its sinusoidal table as a plain buffer
ROTARY_KEYS = ("rope_theta", "rope_parameters", "rotary_dim", "rotary_pct", "rotary_emb_base")
RELATIVE_MODULES = ("relative_attention_bias", "rel_embeddings", "distance_embedding")
SCHEME_NOTES: dict[str, str] = {
    "rotary": "rotary position scheme: positions rotate queries and keys inside attention, so "
    "no table is added to the embeddings (not shown)",
    "alibi": "ALiBi position scheme: a distance penalty is added to the attention scores, so no "
    "table is added to the embeddings (not shown)",
    "relative": "relative position scheme: attention scores depend on the distance between "
    "positions, so no table is added to the embeddings (not shown)",
}


@dataclass(frozen=True)
class PositionTable:
    """An absolute position table (learned or sinusoidal) and how the model indexes it."""

    name: str  # the module's name in the model, e.g. model.encoder.embed_positions
    weight: torch.Tensor  # (rows, d_model)
    offset: int  # the row of position 0 when nothing is padding
    pad_id: int | None  # RoBERTa-style: padding tokens get this row and are not counted
    decoder: bool  # the decoder's table (encoder-decoder models)
    sinusoidal: bool  # a fixed sin/cos table rather than learned rows

    @property
    def positions(self) -> int:
        """How many positions the table covers."""
        return int(self.weight.size(0)) - self.offset

    def row_ids(self, ids: Sequence[int], count: int) -> list[int]:
        """The table row added at each of count positions of ids (extended as non-padding)."""
        if self.pad_id is None:
            return [self.offset + p for p in range(count)]
        rows, seen = [], 0
        for p in range(count):
            if p < len(ids) and ids[p] == self.pad_id:
                rows.append(self.pad_id)
                continue
            seen += 1
            rows.append(self.pad_id + seen)
        return rows

    def rows(self, ids: Sequence[int], count: int) -> np.ndarray:
        """The (count, d_model) rows positions 0..count-1 of ids added to the embeddings."""
        index = torch.tensor(self.row_ids(ids, count), device=self.weight.device)
        used = self.weight.index_select(0, index)  # (count, d_model)
        return used.detach().float().cpu().numpy().copy()


def _offset_and_pad(module: nn.Module) -> tuple[int, int | None]:
    """BART-style tables skip `offset` rows; RoBERTa-style ones (an embedding table with a
    padding row, or a module that counts positions from the input ids) start after padding."""
    offset = getattr(module, "offset", None)
    pad = getattr(module, "padding_idx", None)
    counts_ids = isinstance(module, nn.Embedding) or hasattr(
        module, "create_position_ids_from_input_ids"
    )
    pad_id = int(pad) if isinstance(pad, int) and counts_ids else None
    if isinstance(offset, int):
        return offset, pad_id
    return (0, None) if pad_id is None else (pad_id + 1, pad_id)


def _table(name: str, module: nn.Module) -> PositionTable | None:
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.Tensor):
        weight = getattr(module, "weights", None)  # sinusoidal tables kept as a buffer
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        return None
    offset, pad_id = _offset_and_pad(module)
    decoder, sinusoidal = "decoder" in name.split("."), "Sinusoidal" in type(module).__name__
    return PositionTable(name, weight, offset, pad_id, decoder, sinusoidal)


def position_tables(model: nn.Module, config: PretrainedConfig) -> list[PositionTable]:
    """Absolute position tables in module order (the encoder's first)."""
    fixed = bool(getattr(config.get_text_config(), "sinusoidal_pos_embds", False))  # DistilBERT
    tables = []
    for name, module in model.named_modules():
        if name.rsplit(".", 1)[-1] in TABLE_NAMES:
            table = _table(name, module)
            if table is not None:
                tables.append(replace(table, sinusoidal=table.sinusoidal or fixed))
        for buffer in BUFFER_NAMES:
            value = getattr(module, buffer, None)
            if isinstance(value, torch.Tensor) and value.dim() == 2:
                full = f"{name}.{buffer}" if name else buffer
                decoder = "decoder" in full.split(".")
                tables.append(PositionTable(full, value, 0, None, decoder, sinusoidal=True))
    return tables


def attention_scheme(model: nn.Module, config: PretrainedConfig) -> PositionalScheme | None:
    """The position scheme applied inside attention (rotary, ALiBi, relative), if any."""
    text = config.get_text_config()
    model_type = getattr(text, "model_type", "")
    attn_config = getattr(text, "attn_config", None)
    if model_type == "bloom" or getattr(text, "alibi", False) is True:
        return "alibi"
    if attn_config is not None and getattr(attn_config, "alibi", False) is True:
        return "alibi"  # MPT
    names = [n.rsplit(".", 1)[-1] for n, _ in model.named_modules()]
    classes = [type(m).__name__ for m in model.modules()]
    if model_type == "roformer" or any("Rotary" in c for c in classes):
        return "rotary"
    if any(getattr(text, key, None) is not None for key in ROTARY_KEYS):
        return "rotary"
    scheme = getattr(text, "position_embedding_type", None)
    if isinstance(scheme, str) and scheme.startswith("relative"):
        return "relative"
    if any(n in RELATIVE_MODULES for n in names) or getattr(text, "relative_attention", False):
        return "relative"
    return None


@dataclass(frozen=True)
class Positions:
    """The model's absolute position tables (encoder's first) and its position scheme."""

    tables: tuple[PositionTable, ...]
    scheme: PositionalScheme | None  # None: not recognised
    inside: PositionalScheme | None  # a scheme applied inside attention besides any table

    @classmethod
    def of(cls, model: nn.Module, config: PretrainedConfig) -> Positions:
        inside = attention_scheme(model, config)
        # a rotary model's sin/cos cache (RoFormer's embed_positions) is not added to anything
        found = () if inside in ("rotary", "alibi") else tuple(position_tables(model, config))
        if not found:
            return cls((), inside, None)
        absolute: PositionalScheme = "sinusoidal" if found[0].sinusoidal else "learned"
        return cls(found, absolute, inside)

    @property
    def limit(self) -> int | None:
        """How many positions every table covers, or None without tables."""
        return min((t.positions for t in self.tables), default=None)

    def encoding(
        self, src: Sequence[int] | None, tgt: Sequence[int] | None
    ) -> tuple[np.ndarray | None, list[str]]:
        """The rows added to the embeddings at positions 0..P-1, P = max(S, T), for the
        encoder's (or only) table, and warnings about what the record does not show."""
        if not self.tables:
            if self.scheme is None:
                return None, ["no position scheme recognised: not shown"]
            return None, [SCHEME_NOTES[self.scheme]]
        count = max(len(src or ()), len(tgt or ()))
        first = self._rows(self.tables[0], src, tgt, count)
        others = [
            t.name for t in self.tables[1:]
            if not np.array_equal(self._rows(t, src, tgt, count), first)
        ]  # fmt: skip
        warnings = []
        if others:
            warnings.append(
                f"positional_encoding shows {self.tables[0].name}; {', '.join(others)} "
                "add their own position rows"
            )
        if self.inside is not None:
            warnings.append(f"besides its {self.scheme} table, the model uses a {self.inside} "
                            "position scheme inside attention (not shown)")  # fmt: skip
        return first, warnings

    @staticmethod
    def _rows(
        table: PositionTable, src: Sequence[int] | None, tgt: Sequence[int] | None, count: int
    ) -> np.ndarray:
        side = tgt if (table.decoder or src is None) and tgt is not None else src
        return table.rows(side or (), count)
