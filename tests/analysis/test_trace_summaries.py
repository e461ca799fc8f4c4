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


@pytest.mark.parametrize("name", ["llama", "bart", "t5", "gemma2", "mistral", "bert"])
def test_head_statistics_of_a_scores_record_are_those_of_its_weights(name: str) -> None:
    """A long input's Heads table comes from its summaries, nothing of T² rebuilt: every column,
    end tokens (bart, bert) and windows (mistral, gemma2) included, equals the weights' own."""
    text = words(12) + " " + words(12)
    lens = zoo(name)
    weights, scores = lens.trace(text), lens.trace(text, record="scores")
    assert all(getattr(scores, kind) is None for kind in scores.kinds)  # no weights kept
    want, got = head_statistics(weights), head_statistics(scores)
    assert list(got["tag"]) == list(want["tag"])
    for column in ("entropy", "mean_distance", "self", "previous", "first", "end", "induction"):
        a, b = want[column].to_numpy(np.float64), got[column].to_numpy(np.float64)
        assert np.array_equal(np.isnan(a), np.isnan(b)), column
        assert np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], atol=1e-5), column
    if name in ("bart", "bert"):
        assert got["end"].notna().any()


def test_a_record_from_before_the_later_shares_leaves_them_unknown() -> None:
    """Summaries saved without own, distance and end read back with those NaN, not guessed."""
    scores = zoo("llama").trace(words(12) + " " + words(12), record="scores")
    tree = scores.json_tree()
    for fields in tree["summaries"].values():
        for name in ("own", "distance", "end"):
            fields.pop(name)
    older = Trace.from_dict(tree)
    table = head_statistics(older)
    assert table["self"].isna().all() and table["mean_distance"].isna().all()
    assert table["entropy"].notna().all()
