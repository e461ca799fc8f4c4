"""The model view: one thumbnail per layer × head, downsampled honestly, small at 512 tokens."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlens.record.trace import Trace
from attnlens.viz import model_view
from attnlens.viz.model_view import block_edges, block_share


def test_one_thumbnail_per_head_in_layer_major_order(trace: Trace) -> None:
    fig = model_view(trace, "encoder_self")
    assert len(fig.data) == 2 * 3
    assert trace.encoder_self is not None
    for i, thumb in enumerate(fig.data):
        layer, head = divmod(i, 3)
        assert list(thumb.meta) == [layer, head]
        assert f"layer {layer} · head {head}" in thumb.hovertemplate
        np.testing.assert_allclose(thumb.z, trace.encoder_self[layer, head], rtol=1e-6)


def test_short_inputs_keep_one_cell_per_token_in_hover(trace: Trace) -> None:
    thumb = model_view(trace, "cross").data[0]
    assert list(thumb.x) == ["0 · a", "1 · b", "2 · a", "3 · &lt;/s&gt;"]
    assert list(thumb.y) == ["0 · &lt;s&gt;", "1 · x", "2 · y"]


def test_selected_head_is_outlined_and_checked(trace: Trace) -> None:
    fig = model_view(trace, "decoder_self", selected=(1, 2))
    (shape,) = fig.layout.shapes
    assert shape.xref == "x6 domain" and shape.yref == "y6 domain"
    first = model_view(trace, "decoder_self", selected=(0, 0))
    assert first.layout.shapes[0].xref == "x domain" and first.data[0].xaxis == "x"
    with pytest.raises(ValueError, match="head 5"):
        model_view(trace, "decoder_self", selected=(0, 5))


def test_masked_blocks_stay_blank(trace: Trace) -> None:
    z = model_view(trace, "decoder_self").data[0].z
    assert np.isnan(z[np.triu_indices(3, 1)]).all()


def test_blocks_keep_rows_summing_to_one_and_a_diagonal_stays_sharp() -> None:
    T = 10
    eye = np.broadcast_to(np.eye(T, dtype=np.float32), (1, 1, T, T))
    edges = block_edges(T, 4)
    assert list(edges) == [0, 3, 6, 9, 10]
    share = block_share(eye, np.ones((T, T), dtype=bool), edges, edges)[0, 0]
    np.testing.assert_allclose(share, np.eye(4), atol=1e-6)


def test_twelve_by_twelve_heads_at_512_tokens_stay_under_two_megabytes(synth: type) -> None:
    T = 512
    noise = np.random.default_rng(0).random((12, 12, T, T), dtype=np.float32)
    weights = noise / noise.sum(-1, keepdims=True)  # (L, H, T, T)
    tr = synth.make_trace(
        src=[str(i) for i in range(T)], tgt=["<s>"], L=12, H=12, encoder_self=weights
    )
    fig = model_view(tr, "encoder_self", selected=(11, 11))
    assert len(fig.to_json()) <= 2_000_000
    assert max(fig.data[0].z.shape) <= 64
    assert json.loads(fig.to_json())["data"][0]["x"][0] == "0–12"
    assert "40×40 blocks of 13×13 positions" in fig.layout.title.text


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**16))
def test_blocks_of_any_size_keep_row_sums(Q: int, K: int, side: int, seed: int) -> None:
    noise = np.random.default_rng(seed).random((1, 1, Q, K))
    w = noise / noise.sum(-1, keepdims=True)
    q_edges, k_edges = block_edges(Q, side), block_edges(K, side)
    assert len(q_edges) - 1 <= side and q_edges[0] == 0 and q_edges[-1] == Q
    share = block_share(w, np.ones((Q, K), dtype=bool), q_edges, k_edges)
    np.testing.assert_allclose(share.sum(-1), 1.0, rtol=1e-5)


def test_markup_tokens_are_escaped(markup_trace: Trace) -> None:
    data = json.dumps(json.loads(model_view(markup_trace, "cross").to_json())["data"])
    assert "<b>" not in data and "<img" not in data and "&lt;img src=x onerror=alert(1)&gt;" in data
