"""§3.5: the sinusoidal table, entry by entry from the paper's formula."""

from __future__ import annotations

import math

from attnlens.model.net.positional import sinusoidal_encoding


def test_matches_the_formula() -> None:
    pe = sinusoidal_encoding(50, 16)
    assert pe.shape == (50, 16)
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert math.isclose(pe[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(pe[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)


def test_odd_width_is_filled() -> None:
    pe = sinusoidal_encoding(4, 5)
    assert pe.shape == (4, 5)
    assert math.isclose(pe[3, 4].item(), math.sin(3 / 10000 ** (4 / 5)), abs_tol=1e-6)
