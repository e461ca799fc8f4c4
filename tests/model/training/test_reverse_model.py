"""The bundled reverse model's cross-attention traces the anti-diagonal (accuracy: test_zoo)."""

from __future__ import annotations

import numpy as np

from attnlens import load


def test_hello_world_cross_attention_shows_the_reversal() -> None:
    tr = load("reverse", device="cpu").trace("hello world")
    assert "".join(tr.tgt_tokens[1:]) == "dlrow olleh"
    assert tr.cross is not None
    n = len("hello world")
    mirrored = np.arange(n - 1, -1, -1)
    best = max(
        (np.mean(tr.cross[layer, head, :n].argmax(-1) == mirrored), layer, head)
        for layer in range(tr.cross.shape[0])
        for head in range(tr.cross.shape[1])
    )
    assert best[0] >= 0.9, best
