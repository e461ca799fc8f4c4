"""The summaries a scores record keeps (record/scores.py's Summary), computed at trace time from
the exact weights a tile at a time, are the statistics analysis.head_statistics reads off every
head's weights, and each overview block's max and mean."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from attnlens.analysis import head_statistics
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.record.trace import Trace
from helpers.hf_zoo import zoo_folder


@functools.cache
def zoo(name: str) -> HFLens:
    return HFLens(zoo_folder(name), torch.device("cpu"), name=name)


def words(n: int) -> str:
    return " ".join((["the", "cat", "sat", "on", "a", "mat"] * n)[:n])


@pytest.mark.parametrize("name", ["llama", "bart", "t5", "gemma2"])  # t5: a bias; gemma2: a cap
def test_the_summaries_are_the_statistics_and_pooled_maps_of_the_exact_weights(name: str) -> None:
    """The same numbers analysis.head_statistics reads off every head's weights."""
    text = words(12) + " " + words(12)  # a block twice: induction pairs
    lens = zoo(name)
    weights, scores = lens.trace(text), lens.trace(text, record="scores")
    assert scores.summaries is not None and set(scores.summaries) == set(scores.kinds)
    table = head_statistics(weights)
    for kind, summary in scores.summaries.items():
        rows = table[table["kind"] == kind]
        L, H = summary.entropy.shape
        for field in ("entropy", "previous", "first", "induction"):
            want = rows[field].to_numpy(dtype=np.float64).reshape(L, H)
            got = getattr(summary, field)
            both = ~np.isnan(want)
            assert np.allclose(got[both], want[both], atol=1e-5), (kind, field)
        dense = weights.attention(kind)
        r, c = summary.row_edges, summary.col_edges
        block = dense[:, :, r[0] : r[1], c[0] : c[1]]
        assert np.allclose(summary.overview_max[..., 0, 0], block.max((-1, -2)), atol=1e-3)
        assert np.allclose(summary.overview_mean[..., 0, 0], block.mean((-1, -2)), atol=1e-3)
    back = Trace.from_npz(scores.to_npz())
    assert back.summaries is not None
    for kind in scores.kinds:
        assert np.array_equal(back.summaries[kind].entropy, scores.summaries[kind].entropy)
