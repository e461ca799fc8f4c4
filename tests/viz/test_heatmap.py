"""The head heatmap, checked by its data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model.trace import Trace
from viz import head_heatmap


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
