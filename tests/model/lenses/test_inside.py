"""head_projections: Q, K, V recomputed by value give back exactly the attention recorded."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.model.lenses.causal import CausalLens
from helpers.parts import projections


@pytest.mark.parametrize("kind", ["encoder_self", "decoder_self", "cross"])
def test_softmax_of_q_k_is_the_recorded_attention(tiny_model_dir: Path, kind: str) -> None:
    lens = attnlens.load(str(tiny_model_dir))
    tr = lens.trace("bad cafe", target="efac dab")
    recorded = tr.attention(kind)  # type: ignore[arg-type]
    assert recorded is not None
    for layer in range(2):
        for head in range(2):
            p = projections(lens).head_projections(tr, kind, layer, head)  # type: ignore[arg-type]
            Q, K = len(tr.tokens(kind)[0]), len(tr.tokens(kind)[1])  # type: ignore[arg-type]
            assert p.q.shape == (Q, 8) and p.k.shape == (K, 8) and p.v.shape == (K, 8)
            scores = np.where(p.mask, p.q @ p.k.T / math.sqrt(8), -np.inf)
            weights = np.exp(scores - scores.max(1, keepdims=True))
            weights /= weights.sum(1, keepdims=True)
            np.testing.assert_allclose(weights, recorded[layer, head], atol=1e-5)


def test_the_mask_is_the_one_applied(tiny_model_dir: Path) -> None:
    lens = attnlens.load(str(tiny_model_dir))
    tr = lens.trace("bad", target="dab")
    p = projections(lens).head_projections(tr, "decoder_self", 0, 0)
    assert p.mask.dtype == bool
    np.testing.assert_array_equal(p.mask, tr.decoder_self_mask)


def test_a_head_that_does_not_exist_is_refused(tiny_model_dir: Path) -> None:
    lens = attnlens.load(str(tiny_model_dir))
    tr = lens.trace("bad", target="dab")
    with pytest.raises(attnlens.InputError, match="layers 0-1 and heads 0-1"):
        projections(lens).head_projections(tr, "cross", 2, 0)


def test_a_decoder_only_model_gives_back_its_causal_attention(lm: CausalLens) -> None:
    tr = lm.trace("bad cafe", target=" head")
    recorded = tr.attention("decoder_self")
    assert recorded is not None
    T = len(tr.tgt_tokens)
    for layer in range(2):
        for head in range(2):
            p = projections(lm).head_projections(tr, "decoder_self", layer, head)
            assert p.q.shape == (T, 8) and p.k.shape == (T, 8)
            scores = np.where(p.mask, p.q @ p.k.T / math.sqrt(8), -np.inf)
            weights = np.exp(scores - scores.max(1, keepdims=True))
            weights /= weights.sum(1, keepdims=True)
            np.testing.assert_allclose(weights, recorded[layer, head], atol=1e-5)
    np.testing.assert_array_equal(p.mask, tr.decoder_self_mask)
    with pytest.raises(attnlens.InputError, match="decoder-only"):
        projections(lm).head_projections(tr, "cross", 0, 0)
