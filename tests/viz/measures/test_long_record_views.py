"""The Heads page's figures on a record kept as scores (a long input): rollout from each layer's
head mean taken a head at a time, the same numbers as from the weights; the induction view reads
two heads, the last positions of a long input."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.viz.experiments.induction_view import SHOWN, induction_heads_view
from attnlens.viz.measures.rollout_view import SCORES_POSITIONS, rollout_view
from helpers.long_gpt2 import words


@pytest.fixture(scope="module")
def gpt2(long_gpt2_dir: Path) -> HFLens:
    """2 layers × 2 heads reading 600 positions: a long input in milliseconds."""
    return HFLens(long_gpt2_dir, torch.device("cpu"), name="long-gpt2")


def test_rollout_of_a_scores_record_is_that_of_its_weights(gpt2: HFLens) -> None:
    text = words(40)
    weights, scores = gpt2.trace(text), gpt2.trace(text, record="scores")
    assert scores.decoder_self is None
    for layer in (0, 1):
        want = np.asarray(rollout_view(weights, "decoder_self", "rollout", layer).data[0].z)
        got = np.asarray(rollout_view(scores, "decoder_self", "rollout", layer).data[0].z)
        assert np.allclose(np.nan_to_num(got), np.nan_to_num(want), atol=1e-6)
        assert np.array_equal(np.isnan(got), np.isnan(want))  # the same gaps: no path


def test_rollout_past_its_limit_says_the_limit_and_the_length(gpt2: HFLens) -> None:
    scores = gpt2.trace(words(SCORES_POSITIONS + 20), record="scores")
    T = len(scores.tgt_tokens)
    with pytest.raises(
        ValueError, match=re.escape(f"at most {SCORES_POSITIONS} positions, and this input has {T}")
    ):
        rollout_view(scores, "decoder_self", "rollout")
    with pytest.raises(ValueError, match="too slow"):
        rollout_view(scores, "decoder_self", "flow")


def test_the_induction_view_of_a_long_input_draws_its_last_positions_exactly(
    gpt2: HFLens,
) -> None:
    scores = gpt2.trace(words(400), record="scores")
    T = len(scores.tgt_tokens)
    fig = induction_heads_view(scores, (0, 1), (1, 0))
    first = T - SHOWN
    for trace_z, (layer, head) in zip(fig.data[:2], ((0, 1), (1, 0)), strict=True):
        z = np.asarray(trace_z.customdata)  # the weights (the colour is their cube root)
        assert z.shape == (SHOWN, SHOWN)
        assert trace_z.xgap == trace_z.ygap == 0  # 256 cells: 1 px gaps would hide them
        want = scores.head("decoder_self", layer, head, slice(first, T), slice(first, T))
        assert np.allclose(z, want, atol=1e-6)
    assert f"positions {first}–{T - 1} of {T}" in fig.layout.title.text
    assert fig.data[0].y[0].startswith(f"{first} · ")
