"""One head's queries, keys and values, as its attention used them (§3.2.1, §3.2.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlens.record.trace import Kind


@dataclass(frozen=True, eq=False)
class HeadProjections:
    """Q = x W^Q_i, K = m W^K_i, V = m W^V_i of one head, and the mask that layer applied."""

    kind: Kind
    layer: int
    head: int
    q: np.ndarray  # (T_q, d_k) float32
    k: np.ndarray  # (T_k, d_k) float32
    v: np.ndarray  # (T_k, d_k) float32
    mask: np.ndarray  # (T_q, T_k) bool: True = may attend
