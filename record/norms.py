"""What each head carries and writes, beside where it looks (Kobayashi et al. 2020): per kind of
attention, the norm of what each key gives each head and of what each head writes at each query.

A head's output at query i is Σⱼ αᵢⱼ f_h(xⱼ), f_h(xⱼ) = W_O^h v_{h,j} (model/net/contributions.py),
so αᵢⱼ ‖f_h(xⱼ)‖ says how much of key j reaches the residual stream through head h, where αᵢⱼ
alone says only where the head looked. Both grow with T, not T².
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Measure = Literal["weight", "norm"]
MEASURES: tuple[Measure, ...] = ("weight", "norm")
NORM_FIELDS = ("carried", "written")
NOT_RECORDED = "this record holds no norms (recorded before attnlens kept them)"


@dataclass(frozen=True, eq=False)
class HeadNorms:
    """One kind of attention's norms, every layer and head."""

    carried: np.ndarray  # (L, H, K) float32: ‖f_h(xⱼ)‖, what key j gives head h
    written: np.ndarray  # (L, H, Q) float32: ‖Σⱼ αᵢⱼ f_h(xⱼ)‖, what head h writes at query i

    def weighted(self, layer: int, head: int, weights: np.ndarray, cols: Any) -> np.ndarray:
        """(r, c) float32: αᵢⱼ ‖f_h(xⱼ)‖ of a tile of one head's weights (keys `cols`)."""
        out: np.ndarray = (weights * self.carried[layer, head, cols][None, :]).astype(np.float32)
        return out

    def same(self, other: HeadNorms) -> bool:
        return all(np.array_equal(getattr(self, f), getattr(other, f)) for f in NORM_FIELDS)


def check_measure(measure: str) -> Measure:
    """The measure named, or a clear refusal naming the ones there are."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    return measure  # type: ignore[return-value]


def norms_tree(norms: Mapping[str, HeadNorms]) -> dict[str, dict[str, np.ndarray]]:
    """kind → field → array, as the record's JSON and NPZ keep them."""
    return {kind: {f: getattr(n, f) for f in NORM_FIELDS} for kind, n in norms.items()}


def norms_from(tree: Mapping[str, Mapping[str, Any]]) -> dict[str, HeadNorms] | None:
    """The norms of a record's `norms` tree (None when it has none)."""
    out = {
        kind: HeadNorms(*(np.asarray(fields[f], dtype=np.float32) for f in NORM_FIELDS))
        for kind, fields in tree.items()
    }
    return out or None


def norms_in(z: Any) -> dict[str, HeadNorms] | None:
    """The norms of an NPZ's `norms.KIND.FIELD` entries, if it has any."""
    tree: dict[str, dict[str, Any]] = {}
    for name in z.files:
        if name.startswith("norms."):
            _, kind, part = name.split(".")
            tree.setdefault(kind, {})[part] = z[name]
    return norms_from(tree)
