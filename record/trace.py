"""The Trace record: what one forward pass attended to, as plain numpy data (attnlens.trace/1)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from attnlens.record import norms as carried
from attnlens.record import scores as kept
from attnlens.record import summary as glance
from attnlens.record import trace_table as table
from attnlens.record.export import frame_chunks, json_chunks, npz_bound, plain, write_npz
from attnlens.record.html import HTML_ITEMS, html_table, model_line, token_line
from attnlens.record.kinds import (
    ARCHITECTURE_KINDS,
    KINDS,
    Architecture,
    Kind,
    ModelInfo,
    PositionalScheme,
    default_kind,
    self_kind,
)
from attnlens.record.schema import check_schema
from attnlens.record.trace_io import (
    MappedNpz,
    array_of,
    maybe_list,
    optional_in,
    same_value,
    summaries_in,
)
from attnlens.record.trace_table import FRAME_COLUMNS, FRAME_PIECE_ROWS

SCHEMA = "attnlens.trace/1"
# what record.trace has always offered, now defined beside it
__all__ = ["ARCHITECTURE_KINDS", "FRAME_COLUMNS", "HTML_ITEMS", "KINDS", "SCHEMA",
           "Architecture", "Kind", "ModelInfo", "PositionalScheme", "Trace", "default_kind",
           "self_kind"]  # fmt: skip


@dataclass(frozen=True, eq=False)
class Trace:
    """Attention of every layer and head, the masks and positional encoding as applied.

    L layers, H heads, S source positions, T decoder positions (starting with the start token).
    """

    model: ModelInfo
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    encoder_self: np.ndarray | None  # (L, H, S, S) float32
    decoder_self: np.ndarray | None  # (L, H, T, T) float32, zero above the diagonal
    cross: np.ndarray | None  # (L, H, T, S) float32
    encoder_self_mask: np.ndarray | None  # (S, S) bool: may this query attend to this key
    decoder_self_mask: np.ndarray | None  # (T, T) bool
    cross_mask: np.ndarray | None  # (T, S) bool
    positional_encoding: np.ndarray | None  # (P, d_model) float32, P ≥ max(S, T)
    tgt_logprobs: np.ndarray | None  # (T,) float32: log p(next target token) at each position
    warnings: tuple[str, ...] = field(default=())
    positional_scheme: PositionalScheme | None = None  # None: not stated (older records)
    src_shown: tuple[str, ...] | None = None  # tokens as a person reads them; None: as they are
    tgt_shown: tuple[str, ...] | None = None
    # (L, Q, K) bool per kind whose layers apply different masks (local windows on some layers);
    # the kind's mask above is then their union. None or absent: every layer applies that mask.
    layer_masks: dict[str, np.ndarray] | None = None
    src_segments: tuple[int, ...] | None = None  # (S,) 0 = first text of a pair, 1 = second
    # kind → its layers' queries, keys and row log-sum-exps, kept instead of that kind's
    # weights (long inputs; record/scores.py): any head is exact on demand
    scores: dict[str, tuple[kept.LayerScores, ...]] | None = None
    # kind → every head's overview and statistics, computed at trace time from its exact
    # weights (record/scores.py's Summary); kinds kept as scores have one
    summaries: dict[str, glance.Summary] | None = None
    # kind → ‖f_h(xⱼ)‖ (L, H, K) and ‖Σⱼ αᵢⱼ f_h(xⱼ)‖ (L, H, Q) (record/norms.py); None: not
    # recorded, and norms_missing says why where the model's values could not be taken
    norms: dict[str, carried.HeadNorms] | None = None
    norms_missing: str | None = None

    def __post_init__(self) -> None:
        if self.layer_masks is not None:
            object.__setattr__(self, "layer_masks", dict(self.layer_masks) or None)

    def attention(self, kind: Kind) -> np.ndarray | None:
        """The (L, H, Q, K) array of one kind of attention, or None when the model has none."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        value: np.ndarray | None = getattr(self, kind)
        if value is None and self.scores and kind in self.scores:
            return kept.dense(self.scores[kind])  # T² of every head: ask head() where it is long
        return value

    def head(
        self,
        kind: Kind,
        layer: int,
        head: int,
        rows: kept.Index = slice(None),
        cols: kept.Index = slice(None),
        measure: carried.Measure = "weight",
    ) -> np.ndarray:
        """(r, c) float32: one head's weights αᵢⱼ, or a tile of them, exact from whichever the
        record holds (the weights, or what they were computed from); measure "norm": αᵢⱼ
        ‖f_h(xⱼ)‖, what key j gave the head's output at query i. rows or cols (not both)
        may be an array of positions: those rows (or keys) in its order."""
        if carried.check_measure(measure) == "norm":
            alpha = self.head(kind, layer, head, rows, cols)
            return self.head_norms(kind).weighted(layer, head, alpha, cols)
        if self.scores and kind in self.scores and getattr(self, kind) is None:
            return self.scores[kind][layer].weights(head, rows, cols)
        weights = self.attention(kind)
        if weights is None:
            raise ValueError(f"{self.model.name} records no {kind} attention")
        return np.asarray(weights[layer, head, rows][:, cols])  # (r, c) for arrays too

    def head_norms(self, kind: Kind) -> carried.HeadNorms:
        """One kind's norms (record/norms.py); a ValueError saying why where the record has
        none (an older record, or a model whose values attnlens cannot take)."""
        if kind not in KINDS:  # (not through attention(): on a record of scores it builds T²)
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if self.norms is None or kind not in self.norms:
            why = self.norms_missing or carried.NOT_RECORDED
            raise ValueError(f"{self.model.name}: no norms of {kind} attention: {why}")
        return self.norms[kind]

    def mask(self, kind: Kind, layer: int | None = None) -> np.ndarray | None:
        """The (Q, K) boolean mask of one kind, True where attention was allowed: the mask
        `layer` applied when given, else the union over layers (the same where all agree)."""
        self.attention(kind)  # validates kind
        per_layer = (self.layer_masks or {}).get(kind)
        if layer is not None and per_layer is not None:
            if not 0 <= layer < per_layer.shape[0]:
                raise ValueError(f"layer {layer} is outside 0..{per_layer.shape[0] - 1}")
            return np.asarray(per_layer[layer])
        value: np.ndarray | None = getattr(self, f"{kind}_mask")
        if value is None and self.scores and kind in self.scores:
            layers = self.scores[kind]
            return kept.union_mask(layers if layer is None else (layers[layer],))
        return value

    def tokens(self, kind: Kind) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(query tokens, key tokens) for one kind of attention."""
        return {
            "encoder_self": (self.src_tokens, self.src_tokens),
            "decoder_self": (self.tgt_tokens, self.tgt_tokens),
            "cross": (self.tgt_tokens, self.src_tokens),
        }[kind]

    def shown(self, kind: Kind) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(query tokens, key tokens) of one kind as a person reads them (subword marks
        resolved); the raw tokens where the record holds no readable forms."""
        src = self.src_shown if self.src_shown is not None else self.src_tokens
        tgt = self.tgt_shown if self.tgt_shown is not None else self.tgt_tokens
        return {
            "encoder_self": (src, src),
            "decoder_self": (tgt, tgt),
            "cross": (tgt, src),
        }[kind]

    @property
    def kinds(self) -> tuple[Kind, ...]:
        """The kinds of attention this record holds."""
        held = {k for k in KINDS if getattr(self, k) is not None} | set(self.scores or {})
        return tuple(k for k in KINDS if k in held)  # type: ignore[misc]

    @property
    def self_kind(self) -> Kind:
        """The self-attention over the text the model read (ModelInfo.self_kind)."""
        return self.model.self_kind

    @property
    def input_tokens(self) -> tuple[str, ...]:
        """The tokens of the text the model read, wherever its architecture keeps them: an
        encoder's source, or a decoder-only model's decoder positions (its start token, the
        text, and a target after it where one was given)."""
        return self.tokens(self.self_kind)[1]

    def to_dict(self) -> dict[str, Any]:
        """The attnlens.trace/1 JSON object."""
        out: dict[str, Any] = plain(self.json_tree())
        return out

    def json_tree(self) -> dict[str, Any]:
        """The attnlens.trace/1 object with its arrays kept as numpy arrays, for writers that
        stream them (record.export) instead of building nested lists."""
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "model": self.model.to_dict(),
            "src_tokens": list(self.src_tokens),
            "tgt_tokens": list(self.tgt_tokens),
            "attention": {k: getattr(self, k) for k in KINDS},
            "masks": {k: getattr(self, f"{k}_mask") for k in KINDS},
            "positional_encoding": self.positional_encoding,
            "tgt_logprobs": self.tgt_logprobs,
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        out.update(self._optional())
        return out

    def _optional(self) -> dict[str, Any]:
        """The optional fields this record sets (absent from older records)."""
        out: dict[str, Any] = {}
        if self.positional_scheme is not None:
            out["positional_scheme"] = self.positional_scheme
        if self.src_shown is not None or self.tgt_shown is not None:
            out["shown_tokens"] = {"src": maybe_list(self.src_shown),
                                   "tgt": maybe_list(self.tgt_shown)}  # fmt: skip
        if self.layer_masks:
            out["layer_masks"] = dict(self.layer_masks)
        if self.src_segments is not None:
            out["src_segments"] = list(self.src_segments)
        if self.scores:
            out["scores"] = kept.tree(self.scores)
        if self.summaries:
            out["summaries"] = glance.summary_tree(self.summaries)
        if self.norms:
            out["norms"] = carried.norms_tree(self.norms)
        if self.norms_missing is not None:
            out["norms_missing"] = self.norms_missing
        return out

    def to_json(self, indent: int | None = None) -> str:
        """The record as JSON text (float32 numbers in their shortest exact form; see
        record.export, whose write_json writes the same text to a file piece by piece)."""
        if indent is not None:
            return json.dumps(self.to_dict(), indent=indent)
        return "".join(json_chunks(self.json_tree()))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        check_schema(data, (SCHEMA,))
        att, masks = data["attention"], data["masks"]
        arrays: dict[str, Any] = {k: array_of(att[k], np.float32) for k in KINDS}
        arrays |= {f"{k}_mask": array_of(masks[k], np.bool_) for k in KINDS}
        return cls(
            model=ModelInfo(**data["model"]),
            src_tokens=tuple(data["src_tokens"]),
            tgt_tokens=tuple(data["tgt_tokens"]),
            **arrays,
            positional_encoding=array_of(data["positional_encoding"], np.float32),
            tgt_logprobs=array_of(data["tgt_logprobs"], np.float32),
            warnings=tuple(data.get("warnings", ())),
            **optional_in(data),
        )

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls.from_dict(json.loads(text))

    def to_npz(self) -> bytes:
        """Arrays as .npz entries, everything else as a JSON entry named 'meta'."""
        buffer = io.BytesIO()
        self.write_npz(buffer)
        return buffer.getvalue()

    def write_npz(self, handle: IO[bytes], compressed: bool = True) -> None:
        """What to_npz returns, written into an open binary file one array at a time; with
        compressed=False no entry is deflated (a local copy that read_npz maps whole)."""
        kept_whole = (lambda name: name.startswith("scores.")) if compressed else lambda _: True
        write_npz(*self._npz_parts(), handle, stored=kept_whole)

    def npz_bound(self) -> int:
        """At most how many bytes write_npz writes, counted without writing it (so a front
        end can refuse a file too large before making it)."""
        return npz_bound(*self._npz_parts())

    def _npz_parts(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        arrays = {k: v for k, v in self._arrays().items() if v is not None}
        arrays.update({f"layer_mask.{k}": v for k, v in (self.layer_masks or {}).items()})
        arrays.update(kept.npz_arrays(self.scores or {}))
        meta = {k: v for k, v in self.json_tree().items() if k not in _NOT_META}
        if self.scores:
            meta["scores"] = kept.tree(self.scores, with_arrays=False)
        arrays.update({f"summary.{kind}.{field}": value
                       for kind, fields in glance.summary_tree(self.summaries or {}).items()
                       for field, value in fields.items()})  # fmt: skip
        meta.pop("summaries", None)
        arrays.update({f"norms.{kind}.{field}": value
                       for kind, fields in carried.norms_tree(self.norms or {}).items()
                       for field, value in fields.items()})  # fmt: skip
        meta.pop("norms", None)
        return arrays, meta

    @classmethod
    def from_npz(cls, blob: bytes) -> Trace:
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            return cls._from_entries(z)

    @classmethod
    def read_npz(cls, path: Path) -> Trace:
        """The record of an NPZ file, its uncompressed entries mapped, not read (MappedNpz)."""
        with MappedNpz(path) as z:
            return cls._from_entries(z)

    @classmethod
    def _from_entries(cls, z: Any) -> Trace:
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] if k in z else None for k in cls._array_names()}
        layer_masks = {k: z[f"layer_mask.{k}"] for k in KINDS if f"layer_mask.{k}" in z}
        described = meta.pop("scores", None)
        scores = kept.from_parts(described, z) if described else None
        summaries = summaries_in(z)
        norms = carried.norms_in(z)
        return cls(
            model=ModelInfo(**meta["model"]),
            src_tokens=tuple(meta["src_tokens"]),
            tgt_tokens=tuple(meta["tgt_tokens"]),
            warnings=tuple(meta.get("warnings", ())),
            **{
                **optional_in(meta),
                "layer_masks": layer_masks or None,
                "scores": scores,
                "summaries": summaries,
                "norms": norms,
            },
            **arrays,
        )

    def to_frame(
        self, kind: Kind | None = None, layer: int | None = None, head: int | None = None
    ) -> pd.DataFrame:
        """Long format: one row per (kind, layer, head, query, key) with tokens and weight;
        only one kind, layer or head when given."""
        frames = list(self.frame_pieces(kind, layer, head))
        if not frames:
            return pd.DataFrame(columns=list(FRAME_COLUMNS))
        return pd.concat(frames, ignore_index=True)

    def frame_pieces(
        self,
        kind: Kind | None = None,
        layer: int | None = None,
        head: int | None = None,
        rows: int = FRAME_PIECE_ROWS,
    ) -> Iterator[pd.DataFrame]:
        """to_frame's rows in order, as tables of at most about `rows` rows each (a whole
        query row at least), so a writer never holds the whole table."""
        return table.frame_pieces(self, kind, layer, head, rows)

    def csv_chunks(
        self, kind: Kind | None = None, layer: int | None = None, head: int | None = None
    ) -> Iterator[str]:
        """to_frame(kind, layer, head).to_csv(index=False), in pieces of a few MB."""
        return frame_chunks(self.frame_pieces(kind, layer, head), FRAME_COLUMNS)

    def csv_bound(
        self, kind: Kind | None = None, layer: int | None = None, head: int | None = None
    ) -> int:
        """At most how many bytes csv_chunks(kind, layer, head) writes, counted without
        writing it (so a front end can refuse a file too large before making it)."""
        return table.csv_bound(self, kind, layer, head)

    def equals(self, other: Trace) -> bool:
        """Exact equality of every field: arrays, tokens, settings, the scores and summaries a
        long input keeps (a NaN statistic equals NaN)."""
        return all(same_value(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    @staticmethod
    def _array_names() -> tuple[str, ...]:
        return (*KINDS, *(f"{k}_mask" for k in KINDS), "positional_encoding", "tgt_logprobs")

    def shape_of(self, kind: Kind) -> tuple[int, ...]:
        """(L, H, Q, K) of one kind, without building the weights of a scores record."""
        if self.scores and kind in self.scores:
            return (len(self.scores[kind]), *self.scores[kind][0].shape)
        return tuple(getattr(self, kind).shape)

    def _arrays(self) -> dict[str, np.ndarray | None]:
        return {k: getattr(self, k) for k in self._array_names()}

    def _repr_html_(self) -> str:
        """A notebook's compact summary: the model, the tokens, what was recorded (escaped)."""
        rows = [("model", model_line(self.model))]
        src = self.src_shown if self.src_shown is not None else self.src_tokens
        tgt = self.tgt_shown if self.tgt_shown is not None else self.tgt_tokens
        rows += [("source", token_line(src))] if src else []
        rows += [("decoder", token_line(tgt))] if tgt else []
        shapes = [f"{k} {'×'.join(str(n) for n in self.shape_of(k))}" for k in self.kinds]
        rows += [("attention", ", ".join(shapes) or "none")]
        rows += [("warning", w) for w in self.warnings[:HTML_ITEMS]]
        return html_table("attnlens Trace", rows)


_NOT_META = ("attention", "masks", "layer_masks", "positional_encoding", "tgt_logprobs")
