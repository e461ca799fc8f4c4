"""Positional encoding: the recorded matrix, chosen dimensions, similarity by offset."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import positional_view
from attnlens.viz.positional_view import offset_similarity


def test_panels_hold_the_recorded_encoding(trace: Trace) -> None:
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
    with pytest.raises(ValueError, match="no positional encoding"):
        positional_view(synth.make_trace(positional_encoding=None))
