"""Attention rollout and flow (Abnar & Zuidema 2020)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnlens.analysis.rollout import attention_flow, attention_rollout, reachable, residual_mixing
from attnlens.record.trace import Trace
from attnlens.viz import rollout_view


def test_rollout_of_identity_attention_is_identity(synth: type) -> None:
    eye = synth.pattern(3, 2, 5, offset=0)
    np.testing.assert_allclose(attention_rollout(eye), np.broadcast_to(np.eye(5), (3, 5, 5)))


def test_rollout_multiplies_the_residual_mixing_through_layers(trace: Trace) -> None:
    assert trace.encoder_self is not None
    m = residual_mixing(trace.encoder_self)
    out = attention_rollout(trace.encoder_self)
    np.testing.assert_allclose(out[0], m[0])
    np.testing.assert_allclose(out[1], m[1] @ m[0])
    np.testing.assert_allclose(out.sum(-1), 1.0)


def test_previous_token_heads_roll_back_one_position_per_layer(synth: type) -> None:
    prev = synth.pattern(2, 1, 4, offset=1)
    out = attention_rollout(prev, residual=0.0)
    assert out[1][3, 1] == pytest.approx(1.0)  # two layers back from position 3


def test_flow_of_identity_attention_is_identity(synth: type) -> None:
    np.testing.assert_allclose(attention_flow(synth.pattern(2, 2, 4, offset=0)), np.eye(4))


def test_flow_is_bounded_by_rollout_paths_and_respects_causality(trace: Trace) -> None:
    assert trace.decoder_self is not None
    flow = attention_flow(trace.decoder_self)
    assert flow.shape == (3, 3)
    assert np.allclose(np.triu(flow, 1), 0)  # no flow from later inputs to earlier positions
    assert (flow <= 1 + 1e-9).all() and flow[0, 0] == pytest.approx(1.0)


def test_view_rows_are_positions_and_cross_is_refused(trace: Trace) -> None:
    fig = rollout_view(trace, "encoder_self", "rollout", layer=0)
    assert trace.encoder_self is not None
    np.testing.assert_allclose(fig.data[0].z, residual_mixing(trace.encoder_self)[0], rtol=1e-6)
    assert list(fig.data[0].x) == ["0 · a", "1 · b", "2 · a", "3 · &lt;/s&gt;"]
    assert rollout_view(trace, "decoder_self", "flow").data[0].z.shape == (3, 3)
    with pytest.raises(ValueError, match="self-attention"):
        rollout_view(trace, "cross")


@pytest.mark.parametrize("method", ["rollout", "flow"])
def test_the_causal_future_is_drawn_masked_not_as_a_zero_share(trace: Trace, method: str) -> None:
    """A zero share drew white on a dark page, where the heatmaps draw masked cells grey."""
    fig = rollout_view(trace, "decoder_self", method)  # type: ignore[arg-type]
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[np.triu_indices(3, 1)]).all() and not np.isnan(np.tril(z)).any()
    masked = next(t for t in fig.data if t.name == "masked")
    np.testing.assert_array_equal(np.isnan(np.asarray(masked.z, dtype=float)), ~np.isnan(z))
    assert all(t.name != "masked" for t in rollout_view(trace, "encoder_self").data)


def test_reachable_follows_a_mask_through_layers() -> None:
    window = np.tri(5, dtype=bool) & ~np.tri(5, k=-2, dtype=bool)  # itself and one back
    np.testing.assert_array_equal(reachable(window, 1), window)
    np.testing.assert_array_equal(
        reachable(window, 2), np.tri(5, dtype=bool) & ~np.tri(5, k=-3, dtype=bool)
    )


def test_flow_refuses_inputs_too_long_to_solve_quickly(synth: type) -> None:
    with pytest.raises(ValueError, match="use rollout"):
        attention_flow(synth.pattern(6, 1, 64, offset=0))


def test_markup_tokens_are_escaped(markup_trace: Trace) -> None:
    data = json.dumps(json.loads(rollout_view(markup_trace, "encoder_self").to_json())["data"])
    assert "<b>" not in data and "<img" not in data and "&lt;b&gt;x&lt;/b&gt;" in data


def test_a_long_input_rollout_has_no_cell_gaps_and_thinned_ticks(synth: type) -> None:
    """The issue: the rollout heatmap of a ~370-token input rendered empty (gaps over cells)."""
    words = [f"w{i}" for i in range(300)]
    heat = rollout_view(synth.make_trace(src=words, L=2, H=1), "encoder_self")
    (cells,) = heat.data
    assert cells.xgap == 0 and cells.ygap == 0 and len(cells.x) == 300
    assert len(heat.layout.xaxis.tickvals) <= 30 and heat.layout.height <= 800
