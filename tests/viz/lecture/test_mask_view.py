"""Masks: padding and causal parts, and the applied mask exactly as recorded."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import masks_view
from attnlens.viz.lecture.mask_view import ALLOWED, BLOCKED, PANEL_TITLES, mask_parts


def test_decoder_mask_is_causal_and_applied_equals_the_combination(trace: Trace) -> None:
    fig = masks_view(trace, "decoder_self")
    padding, causal, applied = (t.z for t in fig.data if t.type == "heatmap")
    np.testing.assert_array_equal(causal, np.tril(np.ones((3, 3))))
    assert padding.all()
    np.testing.assert_array_equal(applied, trace.decoder_self_mask)
    assert "applied = padding ∧ causal" in fig.layout.title.text
    assert list(fig.data[2].z[0]) == [1, 0, 0] and "may attend" in fig.data[2].hovertemplate


def test_padding_is_read_off_keys_no_query_may_see(synth: type) -> None:
    mask = np.ones((4, 4), dtype=bool)
    mask[:, 3] = False
    tr = synth.make_trace(src=("a", "a", "b", "<pad>"), encoder_self_mask=mask)
    parts = mask_parts(tr, "encoder_self")
    assert not parts["padding"][:, 3].any() and parts["padding"][:, :3].all()
    assert "causal" not in parts  # the encoder applies no causal mask
    fig = masks_view(tr, "encoder_self")
    assert list(fig.data[0].x) == ["0 · a", "1 · a", "2 · b", "3 · &lt;pad&gt;"]


def test_a_mask_that_is_not_the_combination_is_reported(synth: type) -> None:
    odd = np.ones((3, 3), dtype=bool)  # a decoder that may look ahead
    tr = synth.make_trace(decoder_self_mask=odd)
    assert (
        "differs from padding ∧ causal in 3 cells"
        in masks_view(tr, "decoder_self").layout.title.text
    )


def test_markup_tokens_are_escaped(markup_trace: Trace) -> None:
    data = json.dumps(json.loads(masks_view(markup_trace, "decoder_self").to_json())["data"])
    assert "<b>" not in data and "<img" not in data and "&lt;b&gt;x&lt;/b&gt;" in data


@pytest.mark.parametrize("kind", ["encoder_self", "cross"])
def test_no_causal_panel_where_no_causal_mask_applies(trace: Trace, kind: str) -> None:
    """The issue: encoder self- and cross-attention showed a 'causal' panel."""
    fig = masks_view(trace, kind)  # type: ignore[arg-type]
    titles = [a.text for a in fig.layout.annotations]
    assert titles == [PANEL_TITLES["padding"], PANEL_TITLES["applied"]]
    assert "applied = padding: nothing blocked" in fig.layout.title.text
    assert "causal" not in fig.layout.title.text


def test_a_legend_says_which_colour_may_attend(trace: Trace) -> None:
    fig = masks_view(trace, "decoder_self")
    swatches = {t.name: t.marker.color for t in fig.data if t.type == "scatter"}
    assert swatches == {"may attend": ALLOWED, "blocked": BLOCKED}
    applied = next(t for t in fig.data if t.name == "applied")
    scale = dict((v, c) for v, c in applied.colorscale)
    assert scale[1.0] == ALLOWED and scale[0.0] == BLOCKED  # 1 = may attend
    assert [a.text for a in fig.layout.annotations] == [
        PANEL_TITLES["padding"], PANEL_TITLES["causal"], PANEL_TITLES["applied"]
    ]  # fmt: skip
