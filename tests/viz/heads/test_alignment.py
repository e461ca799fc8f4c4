"""Cross-attention alignment: target rows with the produced tokens, source columns."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import cross_alignment


def test_default_is_the_last_layer_mean_of_heads(trace: Trace) -> None:
    heat, marks = cross_alignment(trace).data  # nothing masked: no grey layer
    assert trace.cross is not None
    np.testing.assert_allclose(heat.z, trace.cross[1].mean(0), rtol=1e-6)
    assert list(heat.y) == ["0 · &lt;s&gt; → x", "1 · x → y", "2 · y → end"]
    assert list(heat.x) == ["0 · a", "1 · b", "2 · a", "3 · &lt;/s&gt;"]
    best = trace.cross[1].mean(0).argmax(-1)
    assert list(marks.x) == [heat.x[j] for j in best]


def test_one_head_and_masked_source_positions(synth: type) -> None:
    mask = np.ones((3, 4), dtype=bool)
    mask[:, 3] = False  # a padded source position
    w = np.full((1, 2, 3, 4), 0.0, dtype=np.float32)
    w[..., :3] = 1 / 3
    w[0, 1, :, :3] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    tr = synth.make_trace(L=1, H=2, cross=w, cross_mask=mask)
    heat, masked, marks = cross_alignment(tr, layer=0, head=1).data
    assert np.isnan(heat.z[:, 3]).all() and (masked.z[:, 3] == 1).all()
    assert list(marks.x) == ["0 · a", "1 · b", "2 · a"]  # both 'a' keep their own column


def test_markup_is_escaped_and_bad_layer_named(markup_trace: Trace) -> None:
    data = json.dumps(json.loads(cross_alignment(markup_trace).to_json())["data"])
    assert "<b>" not in data and "<img" not in data
    with pytest.raises(ValueError, match="layer 9"):
        cross_alignment(markup_trace, layer=9)
