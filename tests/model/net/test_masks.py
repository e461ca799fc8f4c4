"""§3.2.3: padding and subsequent masks."""

from __future__ import annotations

import torch

from attnlens.model.net.masks import padding_mask, subsequent_mask, target_mask


def test_subsequent_mask_allows_only_the_past() -> None:
    m = subsequent_mask(4)[0]
    for i in range(4):
        for j in range(4):
            assert bool(m[i, j]) == (j <= i)


def test_padding_and_target_masks() -> None:
    tokens = torch.tensor([[5, 6, 0, 0]])
    assert padding_mask(tokens, pad=0).tolist() == [[[True, True, False, False]]]
    t = target_mask(tokens, pad=0)[0]
    assert t[3].tolist() == [True, True, False, False]
    assert t[0].tolist() == [True, False, False, False]
