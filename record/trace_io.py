"""Reading a Trace's optional fields back from its JSON or NPZ, and comparing its fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from attnlens.record import norms as carried
from attnlens.record import scores as kept
from attnlens.record import summary as glance


def same_value(a: Any, b: Any) -> bool:
    """Exact equality of two values of a record's field: arrays by their numbers, mappings
    and tuples item by item, a kind's layers of scores and its summary field by field."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, kept.LayerScores):
        return isinstance(b, kept.LayerScores) and a.same(b)
    if isinstance(a, carried.HeadNorms):
        return isinstance(b, carried.HeadNorms) and a.same(b)
    if isinstance(a, glance.Summary):
        return isinstance(b, glance.Summary) and a.same(b)
    if isinstance(a, Mapping):
        return (
            isinstance(b, Mapping)
            and a.keys() == b.keys()
            and all(same_value(a[k], b[k]) for k in a)
        )
    if isinstance(a, tuple) and any(isinstance(x, kept.LayerScores) for x in a):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same_value, a, b))
    return bool(a == b)


def array_of(value: Any, dtype: type) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=dtype)


def maybe_list(tokens: tuple[str, ...] | None) -> list[str] | None:
    return None if tokens is None else list(tokens)


def optional_in(data: dict[str, Any]) -> dict[str, Any]:
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
        "norms": carried.norms_from(data["norms"]) if data.get("norms") else None,
        "norms_missing": data.get("norms_missing"),
    }


def summaries_in(z: Any) -> dict[str, glance.Summary] | None:
    """The summaries of an NPZ's `summary.KIND.FIELD` entries, if it has any."""
    tree: dict[str, dict[str, Any]] = {}
    for name in z.files:
        if name.startswith("summary."):
            _, kind, part = name.split(".")
            tree.setdefault(kind, {})[part] = z[name]
    return glance.summaries_from(tree) or None
