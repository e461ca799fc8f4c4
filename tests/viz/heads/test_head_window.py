"""One head at any length (viz/heads/head_window.py): the overview, a zoom, and the exact cells of a
small window, each checked against the record (its weights, or Trace.head of its scores), on
a GPT-2-shaped model built here with random weights (tests/helpers/long_gpt2.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.record.trace import Trace
from attnlens.viz.heads.head_grid import head_grid
from attnlens.viz.heads.head_window import EXACT_SIDE, clamp, head_window
from attnlens.viz.heads.model_view import block_share, encode
from attnlens.viz.heads.overview_grid import every_head_grid
from attnlens.viz.heads.window_figure import window_figure
from helpers.long_gpt2 import words

N = 400  # words: 401 positions with the start token, past EXACT_SIDE
KIND = "decoder_self"


@pytest.fixture(scope="module")
def lens(long_gpt2_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(long_gpt2_dir))


@pytest.fixture(scope="module")
def scores(lens: attnlens.Lens) -> Trace:
    tr = lens.trace(words(N), record="scores")
    assert tr.decoder_self is None and tr.summaries is not None  # no T² kept
    return tr


@pytest.fixture(scope="module")
def weights(lens: attnlens.Lens) -> Trace:
    return lens.trace(words(N), record="weights")


def decoded(data: dict[str, object]) -> np.ndarray:
    """The payload's values as the browser reads them."""
    raw = base64.b64decode(str(data["values"]))
    dtype = "<f4" if data["dtype"] == "f4" else "<f2"
    rows, cols = data["shape"]  # type: ignore[misc]
    return np.frombuffer(raw, dtype=dtype).astype(np.float32).reshape(rows, cols)


def test_the_whole_head_is_the_records_overview_with_masked_blocks_apart(scores: Trace) -> None:
    window = head_window(scores, KIND, 1, 0)
    assert scores.summaries is not None
    summary = scores.summaries[KIND]
    assert not window.exact and window.whole and window.pooling == "max"
    np.testing.assert_array_equal(window.row_edges, summary.row_edges)
    kept = summary.overview_max[1, 0].astype(np.float32)
    above = window.row_edges[1:, None] - 1 < window.col_edges[None, :-1]  # no key ≤ query
    assert np.isnan(window.values[above]).all()
    np.testing.assert_array_equal(window.values[~above], kept[~above])
    assert "max weight" in window.caption() and "blocks of 4×4 positions" in window.caption()


def test_the_overview_matches_the_weights_of_the_same_input(scores: Trace, weights: Trace) -> None:
    """A record of weights (no overview kept) is pooled here; both are the same numbers, to
    the overview's float16."""
    for pooling in ("max", "mean"):
        kept = head_window(scores, KIND, 1, 1, pooling=pooling).values
        pooled = head_window(weights, KIND, 1, 1, pooling=pooling).values
        np.testing.assert_array_equal(np.isnan(kept), np.isnan(pooled))
        np.testing.assert_allclose(kept, pooled, rtol=2e-3, atol=1e-6)


def test_a_small_window_is_every_cell_exact_from_the_record(scores: Trace, weights: Trace) -> None:
    window = head_window(scores, KIND, 0, 1, rows=(150, 300), cols=(20, 240))
    assert window.exact and window.values.shape == (150, 220)
    assert scores.decoder_self is None and weights.decoder_self is not None
    truth = weights.decoder_self[0, 1, 150:300, 20:240]
    allowed = np.arange(150, 300)[:, None] >= np.arange(20, 240)[None, :]
    np.testing.assert_allclose(window.values[allowed], truth[allowed], rtol=1e-5, atol=1e-7)
    assert np.isnan(window.values[~allowed]).all()
    np.testing.assert_array_equal(
        window.values,
        np.where(allowed, scores.head(KIND, 0, 1, slice(150, 300), slice(20, 240)), np.nan),
    )
    words_of = scores.shown(KIND)[0]
    assert window.query_labels[0] == f"150 · {words_of[150]}"
    assert window.key_labels[-1] == f"239 · {words_of[239]}"


def test_a_large_zoom_is_pooled_over_its_own_positions(weights: Trace) -> None:
    window = head_window(weights, KIND, 1, 0, rows=(10, 390), cols=(0, 300))
    assert not window.exact and window.rows == (10, 390)
    assert window.row_edges[0] == 10 and window.row_edges[-1] == 390
    assert weights.decoder_self is not None
    head = weights.decoder_self[1, 0]
    for i, j in ((0, 0), (60, 40), (94, 70)):
        r0, r1 = window.row_edges[i], window.row_edges[i + 1]
        c0, c1 = window.col_edges[j], window.col_edges[j + 1]
        block = head[r0:r1, c0:c1]
        expected = np.nan if c0 > r1 - 1 else block.max()
        np.testing.assert_allclose(window.values[i, j], expected, rtol=1e-6)


def test_the_payload_carries_the_values_and_stays_small(scores: Trace) -> None:
    overview = head_window(scores, KIND, 1, 0)
    data = overview.data("perceptual")
    np.testing.assert_allclose(decoded(data), overview.values, rtol=1e-3)
    assert data["dtype"] == "f2" and data["bar_title"] == "weight (colour ∝ ∛weight)"
    assert len(json.dumps(data)) < 60_000  # one head, whatever T: at most 128 × 128 blocks
    exact = head_window(scores, KIND, 1, 0, rows=(300, 340), cols=(300, 340)).data("linear")
    assert exact["dtype"] == "f4" and exact["power"] == 1
    np.testing.assert_array_equal(
        decoded(exact),
        scores.head(KIND, 1, 0, slice(300, 340), slice(300, 340))
        * np.where(np.arange(300, 340)[:, None] >= np.arange(300, 340), 1, np.nan),
    )
    assert len(exact["query_labels"]) == 40


def test_windows_are_clamped_and_bad_heads_named(scores: Trace) -> None:
    assert clamp((-5, 10_000), 401) == (0, 401) and clamp((400, 400), 401) == (400, 401)
    assert head_window(scores, KIND, 0, 0, rows=(0, EXACT_SIDE), cols=(0, 1)).exact
    with pytest.raises(ValueError, match=r"head 2 is outside 0..1 \(2 heads\)"):
        head_window(scores, KIND, 0, 2)
    with pytest.raises(ValueError, match="records no cross attention"):
        head_window(scores, "cross", 0, 0)
    with pytest.raises(ValueError, match="pooling must be one of max, mean, got 'sum'"):
        head_window(scores, KIND, 0, 0, pooling="sum")  # type: ignore[arg-type]


def test_every_head_from_the_overviews_matches_the_weights(scores: Trace, weights: Trace) -> None:
    grid = every_head_grid(scores, KIND, selected=(1, 1))
    assert grid.selected == (1, 1) and grid.pooled
    assert weights.decoder_self is not None
    q_edges, k_edges = np.array(grid.row_edges), np.array(grid.col_edges)
    allowed = np.tril(np.ones((N + 1, N + 1), dtype=bool))
    truth = encode(block_share(weights.decoder_self, allowed, q_edges, k_edges))
    assert np.abs(grid.cells.astype(int) - truth.astype(int)).max() <= 1  # float16 overviews
    assert (grid.cells == 0).sum() == (truth == 0).sum()  # the same blocks masked
    # a record of weights keeps today's grid
    assert every_head_grid(weights, KIND).data() == head_grid(weights, KIND).data()


def test_the_download_figure_draws_the_window_by_the_same_rule(scores: Trace) -> None:
    window = head_window(scores, KIND, 1, 0, rows=(0, 100), cols=(0, 100))
    fig = window_figure(window)
    cells = fig.data[0]
    np.testing.assert_array_equal(cells.customdata, window.values)
    np.testing.assert_allclose(cells.z, np.cbrt(window.values), rtol=1e-6)
    assert "%{customdata:.4f}" in cells.hovertemplate
    assert fig.data[1].name == "masked"  # causal: the upper triangle grey
    assert "exact weight" in fig.layout.title.subtitle.text


def test_an_exact_windows_download_carries_the_screens_token_labels(scores: Trace) -> None:
    """Issue 49: the screen labels a zoomed window "576 · w803", the file said 580, 590, …"""
    window = head_window(scores, KIND, 1, 0, rows=(200, 290), cols=(150, 240))
    assert window.exact
    fig = window_figure(window)
    y, x = fig.layout.yaxis, fig.layout.xaxis
    assert y.tickmode == x.tickmode == "array"
    assert y.ticktext[0] == window.query_labels[0] == f"200 · {scores.shown(KIND)[0][200]}"
    assert x.ticktext[0] == window.key_labels[0] and x.tickvals[0] == 150
    step = int(y.tickvals[1] - y.tickvals[0])
    assert len(y.ticktext) <= 30 and y.ticktext[1] == window.query_labels[step]
    pooled = window_figure(head_window(scores, KIND, 1, 0))
    assert pooled.layout.xaxis.tickmode is None  # position numbers while pooled
