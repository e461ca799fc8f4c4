"""The head heatmap, checked by its data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import head_heatmap
from attnlens.viz.heatmap import reference_hits


def test_cells_hold_the_exact_weights_and_every_position_is_its_own_row(trace: Trace) -> None:
    fig = head_heatmap(trace, "encoder_self", 1, 2)
    (weights,) = fig.data  # nothing masked: no grey layer
    assert trace.encoder_self is not None
    np.testing.assert_array_equal(weights.z, trace.encoder_self[1, 2])
    # 'a' appears twice in the source: both keep their own column and row
    assert list(weights.x) == ["0 · a", "1 · b", "2 · a", "3 · &lt;/s&gt;"]
    assert list(weights.y) == list(weights.x)
    assert "%{z:.7g}" in weights.hovertemplate and "%{y}" in weights.hovertemplate


def test_masked_cells_are_a_grey_layer_not_a_low_weight(trace: Trace) -> None:
    weights, masked = head_heatmap(trace, "decoder_self", 0, 0).data
    above = np.triu(np.ones((3, 3), dtype=bool), 1)
    assert np.isnan(weights.z[above]).all() and not np.isnan(weights.z[~above]).any()
    assert (masked.z[above] == 1).all() and np.isnan(masked.z[~above]).all()
    assert "masked" in masked.hovertemplate
    assert weights.hoverongaps is False and masked.hoverongaps is False  # one answer per cell


def test_cross_attention_has_target_rows_and_source_columns(trace: Trace) -> None:
    (weights,) = head_heatmap(trace, "cross", 0, 1).data
    assert weights.z.shape == (3, 4)
    assert list(weights.y) == ["0 · &lt;s&gt;", "1 · x", "2 · y"]


def test_markup_tokens_are_escaped_everywhere(markup_trace: Trace) -> None:
    text = head_heatmap(markup_trace, "cross", 0, 0).to_json()
    data = json.dumps(json.loads(text)["data"])
    assert "&lt;b&gt;x&lt;/b&gt;" in data and "&lt;img src=x onerror=alert(1)&gt;" in data
    assert "<b>" not in data and "<img" not in data and "a&amp;b" in data


@pytest.mark.parametrize(("layer", "head", "message"), [(2, 0, "layer 2"), (0, 3, "head 3")])
def test_out_of_range_layer_or_head_names_the_limit(
    trace: Trace, layer: int, head: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        head_heatmap(trace, "encoder_self", layer, head)


def test_the_true_alignment_is_circled_and_counted(synth: type) -> None:
    cross = np.zeros((1, 2, 3, 4), dtype=np.float32)  # (L, H, T, S): rows 0, 1, 2
    cross[0, 0, [0, 1, 2], [2, 0, 3]] = 1.0  # head 0 looks at sources 2, 0, 3
    cross[0, 1, :, 1] = 1.0  # head 1 always at source 1
    tr = synth.make_trace(L=1, H=2, cross=cross)
    fig = head_heatmap(tr, "cross", 0, 0, reference=(2, 1))  # two output tokens, then </s>
    circles = fig.data[-1]
    assert circles.type == "scatter" and circles.marker.symbol == "circle-open"
    assert list(circles.x) == ["2 · a", "1 · b"] and list(circles.y) == ["0 · &lt;s&gt;", "1 · x"]
    assert fig.layout.title.text.endswith("argmax on the true source: 1 of 2 output tokens")
    assert reference_hits(tr, 0, 1, (2, 1)) == 1 and reference_hits(tr, 0, 0, (2, 0, 3)) == 3
    assert "true source" not in head_heatmap(tr, "cross", 0, 0).layout.title.text


@pytest.mark.parametrize("reference", [(0, 1, 2, 3), (4,), (-1,)])
def test_a_reference_that_does_not_fit_is_refused(trace: Trace, reference: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        head_heatmap(trace, "cross", 0, 0, reference=reference)
