"""A long input's record in the shared trace cache (issue 36): its scores and overviews count
towards the budget and are read-only like any other array, so one session cannot change what
another sees and the cache stays bounded by what it really holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.app.server.trace_cache import SharedTraces, frozen, size_of
from helpers.long_gpt2 import words


@pytest.fixture(scope="module")
def lens(long_gpt2_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(long_gpt2_dir))


def test_scores_and_overviews_are_counted_and_read_only(lens: attnlens.Lens) -> None:
    tr = frozen(lens.trace(words(300), record="scores"))
    assert tr.scores is not None and tr.summaries is not None
    layers = tr.scores["decoder_self"]
    summary = tr.summaries["decoder_self"]
    held = sum(layer.nbytes() for layer in layers) + sum(
        a.nbytes for a in summary.arrays().values()
    )
    assert size_of(tr) >= held > 0
    for array in (layers[0].q, layers[1].k, layers[0].lse, summary.overview_max):
        with pytest.raises(ValueError, match="read-only"):
            array[..., 0] = 0
    np.testing.assert_array_equal(tr.head("decoder_self", 1, 0)[0, :1], [1.0])  # still reads


def test_the_budget_counts_a_scores_record(lens: attnlens.Lens) -> None:
    one = lens.trace(words(300), record="scores")
    cache = SharedTraces(size_of(one) - 1)  # too large to keep beyond its sessions
    kept = cache.get(lens, ("long",), lambda: one)
    assert kept is one and cache.held_bytes == 0
