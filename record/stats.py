"""Statistics on records that both the model side and the figures compute: numpy only."""

from __future__ import annotations

import numpy as np


def ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing their average rank."""
    order = np.argsort(values, kind="stable")
    ranked = np.empty(len(values))
    ranked[order] = np.arange(1, len(values) + 1)
    for v in np.unique(values):
        same = values == v
        ranked[same] = ranked[same].mean()
    return ranked


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ over the positions where both are finite; NaN with fewer than 3 of them
    or when either is constant there."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    keep = np.isfinite(a) & np.isfinite(b)
    if keep.sum() < 3:
        return float("nan")
    ra, rb = ranks(a[keep]), ranks(b[keep])
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])
