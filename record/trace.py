"""The Trace record: what one forward pass attended to, as plain numpy data (attnlens.trace/1)."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from attnlens.record import scores as kept
from attnlens.record import summary as glance
from attnlens.record.export import (
    NUMBER_CHARS,
    csv_cell_bytes,
    frame_chunks,
    json_chunks,
    npz_bound,
    plain,
    write_npz,
)
from attnlens.record.schema import check_schema

SCHEMA = "attnlens.trace/1"
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
FRAME_PIECE_ROWS = 1 << 14  # rows per piece of the long table: a few MB, whatever the record
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
    ) -> np.ndarray:
        """(r, c) float32: one head's weights, or a tile of them, exact from whichever the
        record holds (the weights, or what they were computed from). rows or cols (not both)
        may be an array of positions: those rows (or keys) in its order."""
        if self.scores and kind in self.scores and getattr(self, kind) is None:
            return self.scores[kind][layer].weights(head, rows, cols)
        weights = self.attention(kind)
        if weights is None:
            raise ValueError(f"{self.model.name} records no {kind} attention")
        return np.asarray(weights[layer, head, rows][:, cols])  # (r, c) for arrays too

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
            out["shown_tokens"] = {"src": _maybe_list(self.src_shown),
                                   "tgt": _maybe_list(self.tgt_shown)}  # fmt: skip
        if self.layer_masks:
            out["layer_masks"] = dict(self.layer_masks)
        if self.src_segments is not None:
            out["src_segments"] = list(self.src_segments)
        if self.scores:
            out["scores"] = kept.tree(self.scores)
        if self.summaries:
            out["summaries"] = glance.summary_tree(self.summaries)
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
        arrays: dict[str, Any] = {k: _array(att[k], np.float32) for k in KINDS}
        arrays |= {f"{k}_mask": _array(masks[k], np.bool_) for k in KINDS}
        return cls(
            model=ModelInfo(**data["model"]),
            src_tokens=tuple(data["src_tokens"]),
            tgt_tokens=tuple(data["tgt_tokens"]),
            **arrays,
            positional_encoding=_array(data["positional_encoding"], np.float32),
            tgt_logprobs=_array(data["tgt_logprobs"], np.float32),
            warnings=tuple(data.get("warnings", ())),
            **_optional_in(data),
        )

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls.from_dict(json.loads(text))

    def to_npz(self) -> bytes:
        """Arrays as .npz entries, everything else as a JSON entry named 'meta'."""
        buffer = io.BytesIO()
        self.write_npz(buffer)
        return buffer.getvalue()

    def write_npz(self, handle: IO[bytes]) -> None:
        """What to_npz returns, written into an open binary file one array at a time."""
        write_npz(*self._npz_parts(), handle, stored=lambda name: name.startswith("scores."))

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
        return arrays, meta

    @classmethod
    def from_npz(cls, blob: bytes) -> Trace:
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            arrays = {k: z[k] if k in z else None for k in cls._array_names()}
            layer_masks = {k: z[f"layer_mask.{k}"] for k in KINDS if f"layer_mask.{k}" in z}
            described = meta.pop("scores", None)
            scores = kept.from_parts(described, z) if described else None
            summaries = _summaries_in(z)
        return cls(
            model=ModelInfo(**meta["model"]),
            src_tokens=tuple(meta["src_tokens"]),
            tgt_tokens=tuple(meta["tgt_tokens"]),
            warnings=tuple(meta.get("warnings", ())),
            **{
                **_optional_in(meta),
                "layer_masks": layer_masks or None,
                "scores": scores,
                "summaries": summaries,
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
        for k in self.kinds if kind is None else (kind,):
            if k not in self.kinds:
                continue
            L, H, Q, K = self._shape(k)
            step = max(1, rows // max(1, K))
            for lay in range(L) if layer is None else (layer,):
                for hd in range(H) if head is None else (head,):
                    for start in range(0, Q, step):
                        yield self._block(k, lay, hd, start, min(Q, start + step))

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
        total = len(",".join(FRAME_COLUMNS)) + 1
        for k in self.kinds if kind is None else (kind,):
            if k not in self.kinds:
                continue
            L, H, Q, K = self._shape(k)
            layers = range(L) if layer is None else range(layer, layer + 1)
            heads = range(H) if head is None else range(head, head + 1)
            pairs = len(layers) * len(heads)
            numbers = sum(len(str(i)) + 1 for i in layers) * len(heads) + sum(
                len(str(i)) + 1 for i in heads
            ) * len(layers)
            q_tokens, k_tokens = self.tokens(k)
            per_q = sum(len(str(i)) + 1 + csv_cell_bytes(t) for i, t in enumerate(q_tokens))
            per_k = sum(len(str(i)) + 1 + csv_cell_bytes(t) for i, t in enumerate(k_tokens))
            fixed = len(k) + 1 + NUMBER_CHARS  # kind, and the weight with its line end
            total += pairs * Q * K * fixed + numbers * Q * K + pairs * (K * per_q + Q * per_k)
        return total

    def _block(self, kind: Kind, layer: int, head: int, start: int, stop: int) -> pd.DataFrame:
        """Query rows start..stop-1 of one head in long format."""
        weights = self.head(kind, layer, head, slice(start, stop))  # (stop - start, K)
        K = weights.shape[-1]
        query, key = (a.ravel() for a in np.indices((stop - start, K)))
        query = query + start
        q_tokens, k_tokens = self.tokens(kind)
        n = query.size
        return pd.DataFrame(
            {
                "kind": np.full(n, kind),
                "layer": np.full(n, layer, dtype=np.int64),
                "head": np.full(n, head, dtype=np.int64),
                "query": query.astype(np.int64),
                "key": key.astype(np.int64),
                "query_token": np.asarray(q_tokens, dtype=object)[query],
                "key_token": np.asarray(k_tokens, dtype=object)[key],
                "weight": weights.ravel(),
            }
        )

    def equals(self, other: Trace) -> bool:
        """Exact equality of every field, arrays included."""
        same_arrays = all(
            _same(a, b)
            for a, b in zip(self._arrays().values(), other._arrays().values(), strict=False)
        )
        mine, theirs = self.layer_masks or {}, other.layer_masks or {}
        same_layer_masks = mine.keys() == theirs.keys() and all(
            _same(mine[k], theirs[k]) for k in mine
        )
        return same_arrays and same_layer_masks and self._fields() == other._fields()

    def _fields(self) -> tuple[Any, ...]:
        return (self.model, self.src_tokens, self.tgt_tokens, self.warnings,
                self.positional_scheme, self.src_shown, self.tgt_shown,
                self.src_segments)  # fmt: skip

    @staticmethod
    def _array_names() -> tuple[str, ...]:
        return (*KINDS, *(f"{k}_mask" for k in KINDS), "positional_encoding", "tgt_logprobs")

    def _shape(self, kind: Kind) -> tuple[int, ...]:
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
        shapes = [f"{k} {'×'.join(str(n) for n in self._shape(k))}" for k in self.kinds]
        rows += [("attention", ", ".join(shapes) or "none")]
        rows += [("warning", w) for w in self.warnings[:HTML_ITEMS]]
        return html_table("attnlens Trace", rows)


FRAME_COLUMNS = ("kind", "layer", "head", "query", "key", "query_token", "key_token", "weight")
_NOT_META = ("attention", "masks", "layer_masks", "positional_encoding", "tgt_logprobs")


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _list(a: np.ndarray | None) -> Any:
    return None if a is None else a.tolist()


def _array(value: Any, dtype: type) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=dtype)


def _maybe_list(tokens: tuple[str, ...] | None) -> list[str] | None:
    return None if tokens is None else list(tokens)


def _optional_in(data: dict[str, Any]) -> dict[str, Any]:
    """The optional fields of a record's JSON (or npz meta), as Trace keywords."""
    shown = data.get("shown_tokens") or {}
    layer_masks = data.get("layer_masks") or {}
    segments = data.get("src_segments")
    return {
        "positional_scheme": data.get("positional_scheme"),
        "src_shown": None if shown.get("src") is None else tuple(shown["src"]),
        "tgt_shown": None if shown.get("tgt") is None else tuple(shown["tgt"]),
        "layer_masks": {k: np.asarray(v, dtype=np.bool_) for k, v in layer_masks.items()} or None,
        "src_segments": None if segments is None else tuple(int(i) for i in segments),
        "scores": kept.from_parts(data["scores"]) if data.get("scores") else None,
        "summaries": glance.summaries_from(data["summaries"]) if data.get("summaries") else None,
    }


def _summaries_in(z: Any) -> dict[str, glance.Summary] | None:
    """The summaries of an NPZ's `summary.KIND.FIELD` entries, if it has any."""
    tree: dict[str, dict[str, Any]] = {}
    for name in z.files:
        if name.startswith("summary."):
            _, kind, part = name.split(".")
            tree.setdefault(kind, {})[part] = z[name]
    return glance.summaries_from(tree) or None


HTML_ITEMS = 24  # a notebook summary lists at most this many tokens (or warnings)
HTML_CHARS = 1200  # ... and this many characters of one value
TOKEN_CHARS = 40  # ... and of one token


def model_line(model: ModelInfo) -> str:
    """name (architecture, L layers × H heads, d_model)"""
    return (f"{model.name} ({model.architecture}, {model.n_layers} layers × {model.n_heads} "
            f"heads, d_model {model.d_model})")  # fmt: skip


def token_line(tokens: tuple[str, ...]) -> str:
    """The first HTML_ITEMS tokens, space-separated (a blank token as ␣), then how many more."""
    shown = " ".join(_short(t) if t.strip() else "␣" for t in tokens[:HTML_ITEMS])
    more = len(tokens) - HTML_ITEMS
    return f"{shown} … ({more} more, {len(tokens)} in all)" if more > 0 else shown


def html_table(title: str, rows: list[tuple[str, str]]) -> str:
    """A small two-column table; every value escaped (tokens and names are text, not markup)."""
    cells = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{html.escape(_cut(v))}</td></tr>"
        for k, v in rows
    )
    return f"<div><strong>{html.escape(title)}</strong><table>{cells}</table></div>"


def _cut(text: str, limit: int = HTML_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _short(token: str) -> str:
    return _cut(token, TOKEN_CHARS)
