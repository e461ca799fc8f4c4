"""One head and every head at any length in the norm measure, αᵢⱼ ‖f_h(xⱼ)‖ (issue 47): on a long
record of scores, from the record's overview of the norms or pooled for one head on demand
(model/lenses/head_pooling.py), against the same input recorded as weights, where every number
is computed from the dense weights and the norms; and what a record without the overview or
without norms says. A GPT-2-shaped model with random weights (tests/helpers/long_gpt2.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.model.lenses.head_pooling import norm_blocks
from attnlens.record.norms import Measure
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.head_grid import head_grid, norm_share
from attnlens.viz.heads.head_window import Pooling, head_window, pooled
from attnlens.viz.heads.model_view import decode, encode
from attnlens.viz.heads.overview_grid import every_head_grid
from attnlens.viz.heads.window_figure import window_figure
from helpers.long_gpt2 import words

N = 400  # words: 401 positions with the start token, past EXACT_SIDE
KIND = "decoder_self"
RTOL, ATOL = 2e-3, 1e-6  # the record's overviews are float16: 2⁻¹¹ of each value


@pytest.fixture(scope="module")
def lens(long_gpt2_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(long_gpt2_dir))


@pytest.fixture(scope="module")
def scores(lens: attnlens.Lens) -> Trace:
    tr = lens.trace(words(N), record="scores")
    assert tr.decoder_self is None and tr.summaries is not None and tr.norms is not None
    return tr


@pytest.fixture(scope="module")
def weights(lens: attnlens.Lens) -> Trace:
    tr = lens.trace(words(N), record="weights")
    assert tr.decoder_self is not None and tr.norms is not None
    return tr


def given(weights: Trace, layer: int, head: int) -> np.ndarray:
    """(Q, K) float64: αᵢⱼ ‖f_h(xⱼ)‖ from the dense weights and the norms."""
    assert weights.decoder_self is not None and weights.norms is not None
    alpha = weights.decoder_self[layer, head].astype(np.float64)
    return alpha * weights.norms[KIND].carried[layer, head][None, :]


def blocks(an: np.ndarray, r: np.ndarray, c: np.ndarray, how: str) -> np.ndarray:
    return np.array([[getattr(an[r[i] : r[i + 1], c[j] : c[j + 1]], how)()
                      for j in range(len(c) - 1)] for i in range(len(r) - 1)])  # fmt: skip


def model_pooler(
    tr: Trace,
    kind: Kind,
    layer: int,
    head: int,
    row_e: np.ndarray,
    col_e: np.ndarray,
    pooling: Pooling,
    measure: Measure,
) -> np.ndarray:
    """The app's pooler: the norm measure of a record of scores by the trace-time code."""
    if measure != "norm":
        return pooled(tr, kind, layer, head, row_e, col_e, pooling, measure)
    most, mean = norm_blocks(tr, kind, layer, head, row_e, col_e)
    return most if pooling == "max" else mean


def refusing_pooler(*_: object) -> np.ndarray:
    raise AssertionError("the whole head was pooled on demand")


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_the_whole_heads_norm_blocks_are_the_records_overview(
    scores: Trace, weights: Trace, pooling: Pooling
) -> None:
    """Block mean and block max alike: the record's own overview, nothing pooled on demand
    (Explore's first switch to the norms draws it at once), as the dense weights give it."""
    window = head_window(
        scores, KIND, 1, 0, pooling=pooling, measure="norm", pooler=refusing_pooler
    )
    assert scores.summaries is not None
    summary = scores.summaries[KIND]
    kept = summary.overview_norm_mean if pooling == "mean" else summary.overview_norm_max
    assert kept is not None
    ok = ~np.isnan(window.values)
    np.testing.assert_array_equal(window.values[ok], kept[1, 0].astype(np.float32)[ok])
    want = blocks(given(weights, 1, 0), window.row_edges, window.col_edges, pooling)
    np.testing.assert_allclose(window.values[ok], want[ok], rtol=RTOL, atol=ATOL)
    same = head_window(weights, KIND, 1, 0, pooling=pooling, measure="norm")  # pooled here
    np.testing.assert_allclose(window.values[ok], same.values[ok], rtol=RTOL, atol=ATOL)
    on_demand = model_pooler(scores, KIND, 1, 0, window.row_edges, window.col_edges, pooling,
                             "norm")  # fmt: skip
    np.testing.assert_allclose(window.values[ok], on_demand[ok], rtol=RTOL, atol=ATOL)
    assert window.title.endswith("· norm α‖f(x)‖") and f"{pooling} α‖f(x)‖" in window.caption()


@pytest.mark.parametrize(
    ("rows", "cols"), [(None, None), ((10, 390), (0, 300)), ((120, 401), (100, 380))]
)
def test_one_heads_norm_max_on_demand_is_exact(
    scores: Trace, weights: Trace, rows: tuple[int, int] | None, cols: tuple[int, int] | None
) -> None:
    """Zoomed windows (their mask's offset moved to the window's first row and key), pooled
    on demand: each block's largest and mean αᵢⱼ ‖f‖, to float32; the whole head, the
    record's float16 overviews."""
    an = given(weights, 1, 1)
    poolings: tuple[Pooling, ...] = ("max", "mean")
    for pooling in poolings:
        window = head_window(
            scores, KIND, 1, 1, rows, cols, pooling, measure="norm", pooler=model_pooler
        )
        assert not window.exact
        ok = ~np.isnan(window.values)
        want = blocks(an, window.row_edges, window.col_edges, pooling)
        recorded = rows is None  # the record's float16 overview
        rtol, atol = (RTOL, ATOL) if recorded else (1e-5, 1e-9)
        np.testing.assert_allclose(window.values[ok], want[ok], rtol=rtol, atol=atol)


def test_a_small_norm_window_is_every_cell_exact(scores: Trace, weights: Trace) -> None:
    window = head_window(scores, KIND, 0, 1, (150, 300), (20, 240), measure="norm")
    assert window.exact and window.caption().endswith("exact α‖f(x)‖")
    ok = ~np.isnan(window.values)
    np.testing.assert_allclose(window.values[ok], given(weights, 0, 1)[150:300, 20:240][ok],
                               rtol=1e-5, atol=1e-7)  # fmt: skip


def test_the_payload_and_download_say_which_measure_they_show(scores: Trace) -> None:
    window = head_window(scores, KIND, 1, 0, pooling="mean", measure="norm")
    data = window.data("perceptual")
    unit = float(np.nanmax(window.values))
    assert data["measure"] == "norm" and data["quantity"] == "α‖f(x)‖" and data["unit"] == unit
    assert data["bar_title"] == f"norm α‖f(x)‖ ÷ {unit:.3g} (colour ∝ ∛share)"
    fig = window_figure(window)
    assert fig.data[0].colorbar.title.text == data["bar_title"]
    np.testing.assert_allclose(np.nanmax(fig.data[0].z), 1.0, rtol=1e-6)  # ∛(largest ÷ unit)
    np.testing.assert_array_equal(fig.data[0].customdata, window.values)  # the values as such
    plain = head_window(scores, KIND, 1, 0).data("perceptual")
    assert plain["measure"] == "weight" and plain["unit"] == 1.0


def test_every_heads_norm_shares_from_the_overview_match_the_weights(
    scores: Trace, weights: Trace
) -> None:
    """The norm thumbnails: the share of what each block's queries carry that its keys gave,
    from the record's overview, as the dense weights and norms give it."""
    long = every_head_grid(scores, KIND, (1, 1), measure="norm")
    assert weights.decoder_self is not None and weights.norms is not None and long.pooled
    q_edges, k_edges = np.array(long.row_edges), np.array(long.col_edges)
    allowed = np.tril(np.ones((N + 1, N + 1), dtype=bool))
    carried = weights.norms[KIND].carried
    dense = encode(norm_share(weights.decoder_self, carried, allowed, q_edges, k_edges))
    assert np.abs(long.cells.astype(int) - dense.astype(int)).max() <= 1  # float16 overview
    assert (long.cells == 0).sum() == (dense == 0).sum()
    assert "norm α‖f(x)‖" in long.title and long.data()["measure"] == "norm"
    assert not np.array_equal(long.cells, every_head_grid(scores, KIND).cells)


def test_short_norm_thumbnails_are_each_rows_share_of_what_it_carries(weights: Trace) -> None:
    """One cell a position pair: αᵢⱼ ‖f(xⱼ)‖ ÷ Σⱼ αᵢⱼ ‖f(xⱼ)‖ of each row."""
    assert weights.decoder_self is not None and weights.decoder_self_mask is not None
    assert weights.norms is not None
    norms = weights.norms[KIND]
    cut = dataclasses.replace(
        norms, carried=norms.carried[..., :30], written=norms.written[..., :30]
    )
    short = dataclasses.replace(
        weights, decoder_self=weights.decoder_self[..., :30, :30],
        tgt_tokens=weights.tgt_tokens[:30], decoder_self_mask=weights.decoder_self_mask[:30, :30],
        tgt_shown=None, norms={KIND: cut},
    )  # fmt: skip
    grid = head_grid(short, KIND, measure="norm")
    assert not grid.pooled
    an = given(short, 1, 1)
    share = an / an.sum(-1, keepdims=True)
    got = decode(grid.cells[1, 1])
    ok = np.tril(np.ones((30, 30), dtype=bool))
    np.testing.assert_allclose(got[ok], share[ok], atol=0.01)


def test_without_the_overview_or_the_norms_the_views_say_why(scores: Trace) -> None:
    assert scores.summaries is not None
    older = dataclasses.replace(scores, summaries={KIND: dataclasses.replace(
        scores.summaries[KIND], overview_norm_mean=None, overview_norm_max=None)})  # fmt: skip
    with pytest.raises(ValueError, match="keeps no overview of the norms"):
        every_head_grid(older, KIND, measure="norm")
    for pooling in ("mean", "max"):  # pooled on demand, as the record's would be
        window = head_window(older, KIND, 1, 0, pooling=pooling, measure="norm",
                             pooler=model_pooler)  # fmt: skip
        np.testing.assert_allclose(window.values, head_window(scores, KIND, 1, 0, pooling=pooling,
                                   measure="norm").values, rtol=RTOL, atol=ATOL)  # fmt: skip
    bare = dataclasses.replace(older, norms=None)
    for show in (lambda: head_window(bare, KIND, 1, 0, measure="norm"),
                 lambda: every_head_grid(bare, KIND, measure="norm")):  # fmt: skip
        with pytest.raises(ValueError, match="no norms of decoder_self attention"):
            show()


def test_the_norm_measure_never_builds_every_heads_weights(
    scores: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trace.head_norms checked the kind through Trace.attention, which on a record of scores
    builds every head's T² (at 8,192 tokens, 137 GB on Llama-3.2-1B): never again."""
    from attnlens.record import scores as kept

    def refused(*_: object) -> None:
        raise AssertionError("every head's weights built")

    monkeypatch.setattr(kept, "dense", refused)
    scores.head_norms(KIND)
    scores.head(KIND, 1, 0, slice(0, 3), slice(0, 3), measure="norm")
    head_window(scores, KIND, 1, 0, pooling="max", measure="norm", pooler=model_pooler)
    every_head_grid(scores, KIND, measure="norm")
    with pytest.raises(ValueError, match="kind must be one of"):
        scores.head_norms("sideways")  # type: ignore[arg-type]
