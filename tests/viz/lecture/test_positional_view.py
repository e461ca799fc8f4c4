"""Positional encoding: the recorded matrix, chosen dimensions, similarity by offset."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnlens.viz import positional_view
from attnlens.viz.lecture.positional_view import offset_similarity, positional_scheme_text


def test_panels_hold_the_recorded_encoding(synth: type) -> None:
    trace = replace(synth.make_trace(), positional_scheme="sinusoidal")
    fig = positional_view(trace, dims=(0, 3))
    pe = trace.positional_encoding
    assert pe is not None
    matrix, dim0, dim3, sim, band, mean = fig.data
    assert band.fill == "toself"
    np.testing.assert_array_equal(matrix.z, pe)
    np.testing.assert_array_equal(dim0.y, pe[:, 0])
    assert dim0.name == "dim 0 (sin)" and dim3.name == "dim 3 (cos)"
    np.testing.assert_allclose(sim.z, pe @ pe.T, rtol=1e-5)
    assert mean.x[-1] == pe.shape[0] - 1


def test_sinusoid_similarity_depends_on_the_offset_only(synth: type) -> None:
    pe = synth.sinusoid(40, 16).astype(np.float64)
    mean, low, high = offset_similarity(pe)
    np.testing.assert_allclose(low, high, atol=1e-5)
    assert mean[0] == pytest.approx(8.0)  # d_model / 2: sin² + cos² per pair
    assert mean[1] < mean[0]


def test_missing_encoding_or_bad_dimension_is_named(synth: type) -> None:
    with pytest.raises(ValueError, match="dimension 8"):
        positional_view(synth.make_trace(), dims=(8,))
    with pytest.raises(ValueError, match="no positional encoding to draw"):
        positional_view(synth.make_trace(positional_encoding=None))


def test_a_learned_table_is_named_as_such_and_coloured_by_its_own_range(synth: type) -> None:
    """The issue: BERT's learned embeddings (±0.08) were labelled sin/cos on a ±2 scale."""
    pe = np.random.default_rng(0).normal(0, 0.03, size=(50, 40)).astype(np.float32)
    tr = replace(synth.make_trace(positional_encoding=pe), positional_scheme="learned")
    fig = positional_view(tr, dims=(0, 1))
    assert fig.layout.title.text.startswith("learned position embeddings")
    assert [t.name for t in fig.data[1:3]] == ["dim 0", "dim 1"]  # no sin/cos
    pe[0, 0] = 1.5  # one outlier (BERT's position 0 has some) must not wash out the rest
    fig = positional_view(tr, dims=(0, 1))
    reach = float(np.percentile(np.abs(pe), 99))
    assert fig.layout.coloraxis.cmin == pytest.approx(-reach)
    assert fig.layout.coloraxis.cmax == pytest.approx(reach) and reach < 0.2
    assert "learned" in positional_scheme_text(tr)


def test_an_unstated_scheme_claims_nothing(synth: type) -> None:
    fig = positional_view(synth.make_trace(), dims=(0,))  # an older record: no scheme
    assert "not recorded" in fig.layout.title.text and fig.data[1].name == "dim 0"


@pytest.mark.parametrize("scheme", ["rotary", "alibi", "relative", "none"])
def test_schemes_without_a_table_are_said_not_drawn(synth: type, scheme: str) -> None:
    tr = replace(synth.make_trace(positional_encoding=None), positional_scheme=scheme)
    with pytest.raises(ValueError, match=r"no table is added|no positional information"):
        positional_view(tr)
    assert {"rotary": "rotary", "alibi": "ALiBi", "relative": "relative", "none": "no pos"}[
        scheme
    ] in positional_scheme_text(tr)


def test_the_table_has_no_axis_title_and_the_curves_are_titled(synth: type) -> None:
    """The table's panel title names its axes; the line chart beside it said nothing of its x."""
    fig = positional_view(synth.make_trace())
    assert fig.layout.xaxis.title.text is None
    assert fig.layout.xaxis2.title.text == "position"
    assert fig.layout.xaxis3.title.text == "position q"


def test_each_colour_bar_stands_beside_its_own_heatmap(synth: type) -> None:
    """Both bars sat at the figure's right edge, beside the line charts: each now stands between
    its heatmap (left column) and the right column, as tall as its panel."""
    fig = positional_view(synth.make_trace())
    left_ends, right_starts = fig.layout.xaxis.domain[1], fig.layout.xaxis2.domain[0]
    for axis, panel in (("coloraxis", fig.layout.yaxis), ("coloraxis2", fig.layout.yaxis3)):
        bar = fig.layout[axis].colorbar
        assert left_ends < bar.x < right_starts
        assert bar.y - bar.len / 2 == pytest.approx(panel.domain[0])
        assert bar.y + bar.len / 2 == pytest.approx(panel.domain[1])
