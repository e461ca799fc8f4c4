"""A scores record's tiles (record/scores.py): a tile too large to build at once is built a block
of rows at a time over the keys they can reach, and is the same tile: its zeros exactly where the
mask is, every weight to float32's rounding (a matrix product of another shape rounds apart)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.record import scores
from attnlens.record.scores import LayerScores, MaskRule

Q, H, H_KV, D = 96, 4, 2, 8


def layer(mask: MaskRule, bias: bool, softcap: float | None) -> LayerScores:
    rng = np.random.default_rng(0)
    return LayerScores(
        q=rng.standard_normal((H, Q, D)).astype(np.float32),
        k=rng.standard_normal((H_KV, Q, D)).astype(np.float32),
        lse=rng.standard_normal((H, Q)).astype(np.float32) + 4,
        scale=D**-0.5,
        mask=mask,
        softcap=softcap,
        bias=rng.standard_normal((H, 2 * Q - 1)).astype(np.float32) if bias else None,
    )


@pytest.mark.parametrize(
    ("mask", "bias", "softcap"),
    [
        (MaskRule(), False, None),
        (MaskRule(causal=True), True, None),
        (MaskRule(causal=True, window=20), False, 30.0),
    ],
)
@pytest.mark.parametrize(
    ("rows", "cols"), [(slice(None), slice(None)), (slice(10, 90), slice(5, 70))]
)
def test_a_large_tile_built_by_blocks_is_the_tile(
    monkeypatch: pytest.MonkeyPatch,
    mask: MaskRule,
    bias: bool,
    softcap: float | None,
    rows: slice,
    cols: slice,
) -> None:
    lay = layer(mask, bias, softcap)
    whole = [lay.weights(h, rows, cols) for h in range(H)]  # Q² is below CELLS_PER_BLOCK
    monkeypatch.setattr(scores, "CELLS_PER_BLOCK", 100)  # now a block is a row or two
    calls: list[int] = []
    by_blocks = LayerScores._by_blocks

    def counted(self: LayerScores, *args: object) -> np.ndarray:
        calls.append(1)
        return by_blocks(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(LayerScores, "_by_blocks", counted)
    for h in range(H):
        blocked = lay.weights(h, rows, cols)
        np.testing.assert_array_equal(blocked == 0, whole[h] == 0)
        np.testing.assert_allclose(blocked, whole[h], rtol=2e-6, atol=1e-8)
        if rows == slice(None) and cols == slice(None):
            np.testing.assert_allclose(lay.head(h), whole[h], rtol=2e-6, atol=1e-8)
    assert calls  # the tile was built by blocks
