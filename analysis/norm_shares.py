"""How much of what heads carry comes from some keys, against how much weight those keys get
(Kobayashi et al. 2020, §4: BERT's weight on [CLS] and [SEP] carries little).

Both shares are read off each head's column sums rⱼ = Σᵢ αᵢⱼ (the weight key j receives over
all queries) and the norms nⱼ = ‖f_h(xⱼ)‖ (record/norms.py), so any set of keys costs O(K) per
head at any length:

    weight share of S = Σ_{j∈S} rⱼ / Q             (the mean over queries of Σ_{j∈S} αᵢⱼ)
    norm share of S   = Σ_{j∈S} rⱼ nⱼ / Σⱼ rⱼ nⱼ   (of Σᵢ Σⱼ αᵢⱼ ‖f_h(xⱼ)‖, the part from S)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# defined with the record, where a trace's summaries also read them (record/picking.py)
from attnlens.record.picking import SPECIALS as SPECIALS
from attnlens.record.picking import special_keys as special_keys


def shares(
    received: np.ndarray, carried: np.ndarray, queries: int, keys: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """(weight share, norm share) of the keys `keys`, each (L, H) float64, from the column sums
    received (L, H, K) and the norms carried (L, H, K) of Q = `queries` query rows."""
    if received.shape != carried.shape:
        raise ValueError(f"column sums {received.shape} and norms {carried.shape} differ")
    picked = np.asarray(list(keys), dtype=np.int64)
    r = received.astype(np.float64)
    weighted = r * carried.astype(np.float64)  # (L, H, K)
    total = weighted.sum(-1)
    weight = r[..., picked].sum(-1) / queries
    norm = np.divide(weighted[..., picked].sum(-1), total, out=np.zeros_like(total),
                     where=total > 0)  # fmt: skip
    return weight, norm
