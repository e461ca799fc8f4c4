"""What each head carries and writes, beside where it looks (Kobayashi et al. 2020): per kind of
attention, the norm of what each key gives each head and of what each head writes at each query.

A head's output at query i is Σⱼ αᵢⱼ f_h(xⱼ), f_h(xⱼ) = W_O^h v_{h,j} (model/net/contributions.py),
so αᵢⱼ ‖f_h(xⱼ)‖ says how much of key j reaches the residual stream through head h, where αᵢⱼ
alone says only where the head looked. Both grow with T, not T².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class HeadNorms:
    """One kind of attention's norms, every layer and head."""

    carried: np.ndarray  # (L, H, K) float32: ‖f_h(xⱼ)‖, what key j gives head h
    written: np.ndarray  # (L, H, Q) float32: ‖Σⱼ αᵢⱼ f_h(xⱼ)‖, what head h writes at query i

    def weighted(self, layer: int, head: int, weights: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """(r, c) float32: αᵢⱼ ‖f_h(xⱼ)‖ of a tile of one head's weights (keys `cols`)."""
        out: np.ndarray = weights * self.carried[layer, head, cols][None, :]
        return out
