"""The token-set figures (viz/measures/token_sets.py) are checked by their data: a square per head
at its layer and head, coloured by the set's share, the hover its number to 4 decimals and the key
it is on; the profile is the head's row of the result; tokens stay text."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnlens.analysis.token_sets import set_attention
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Trace
from attnlens.viz.heads.colour_scale import colour_position
from attnlens.viz.measures.token_sets import (
    BARS_UP_TO,
    OUTLINE,
    describe,
    token_set_grid,
    token_set_profile,
)


def test_a_key_set_grid_is_one_square_per_head_with_its_share(trace: Trace) -> None:
    result = set_attention(trace, "encoder_self", "keys", (0, 2))
    fig = token_set_grid(trace, result, "linear", selected=(1, 2))
    squares, outline = fig.data
    L, H = 2, 3
    assert list(squares.x) == [h for _ in range(L) for h in range(H)]
    assert list(squares.y) == [la for la in range(L) for _ in range(H)]
    w = trace.encoder_self
    assert w is not None
    want = w[:, :, :, [0, 2]].sum(-1).mean(-1)  # (L, H)
    np.testing.assert_allclose(squares.marker.color, want.ravel(), atol=1e-6)
    assert squares.hovertext[5] == f"layer 1 · head 2<br>the set receives {want[1, 2]:.4f}"
    assert (outline.x, outline.y) == ((2,), (1,)) and outline.marker.color == OUTLINE
    assert "2 keys: the share of all attention they receive" in fig.layout.title.text
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # layer 0 on top
    assert squares.marker.colorbar.title.text == "share (linear colour)"


def test_a_set_of_one_is_named_in_the_singular(trace: Trace) -> None:
    """'1 query', '1 key': the caption under the grid said '1 queries'."""
    for side, word in (("queries", "1 query:"), ("keys", "1 key:")):
        weights = set_attention(trace, "encoder_self", side, (1,))
        for result in (weights, dataclasses.replace(weights, measure="norm")):
            assert describe(result).startswith(word), describe(result)
        two = set_attention(trace, "encoder_self", side, (1, 2))
        assert describe(two).startswith(f"2 {side}:")


def test_a_query_set_grid_names_where_the_set_looks_most(trace: Trace) -> None:
    result = set_attention(trace, "cross", "queries", (1, 2))
    fig = token_set_grid(trace, result)
    (squares,) = fig.data
    w = trace.cross
    assert w is not None
    mean = w[:, :, [1, 2]].mean(2)  # (L, H, S)
    np.testing.assert_allclose(
        squares.marker.color, colour_position(mean.max(-1).ravel(), "perceptual"), atol=1e-6
    )
    peak = int(mean[0, 1].argmax())
    token = trace.src_tokens[peak]
    assert squares.hovertext[1] == (
        f"layer 0 · head 1<br>looks most at {peak} · {token}: {mean[0, 1].max():.4f}"
    )
    assert squares.marker.colorbar.title.text == "weight (colour ∝ ∛weight)"


def test_markup_tokens_are_text_in_the_hover(markup_trace: Trace) -> None:
    result = set_attention(markup_trace, "encoder_self", "queries", (0,))
    (squares,) = token_set_grid(markup_trace, result).data
    hover = " ".join(squares.hovertext)
    assert "<b>" not in hover and "<img" not in hover
    profile = token_set_profile(markup_trace, result, 0, 0)
    texts = " ".join(profile.data[0].hovertext)
    assert "&lt;img src=x onerror=alert(1)&gt;" in texts and "<img" not in texts


def test_the_profile_is_the_heads_row_of_the_result(trace: Trace, synth: type) -> None:
    result = set_attention(trace, "decoder_self", "keys", (1,))
    fig = token_set_profile(trace, result, 1, 0)
    (bars,) = fig.data
    np.testing.assert_array_equal(bars.y, result.profile[1, 0])
    assert bars.type == "bar" and fig.layout.xaxis.title.text == "query position"
    assert bars.hovertext[2] == f"2 · y: {result.profile[1, 0, 2]:.4f}"
    # weights in plain decimals: at 8,192 tokens Plotly's own ticks read "300μ"
    assert fig.layout.yaxis.tickformat == "~g" and not fig.layout.yaxis.exponentformat
    with pytest.raises(ValueError, match="layer 2, head 0 is outside the 2 × 3 heads"):
        token_set_profile(trace, result, 2, 0)
    n = BARS_UP_TO + 1
    long = synth.make_trace(src=tuple(f"t{i}" for i in range(n)), tgt=("<s>", "x"), L=1, H=1)
    line = token_set_profile(long, set_attention(long, "cross", "queries", (0,)), 0, 0).data[0]
    assert line.type == "scatter" and len(line.y) == n


def test_many_heads_are_numbered_so_the_numbers_never_touch(synth: type) -> None:
    """Llama-3.2-1B's 32 heads at 8,192 tokens in presentation mode: a number on every 20 px
    column ran "1011121314" together at 24 px; 12 heads keep a number each."""
    from attnlens.viz.measures.token_sets import head_label_step, square_px
    from attnlens.viz.shared.style import PROJECTOR_FONT

    for heads, step in ((12, 1), (16, 1), (32, 2)):
        side = square_px(heads)
        assert head_label_step(side) == step, heads
        pitch = (side + 4) * step  # px between two numbered columns
        assert pitch >= 2 * 0.55 * PROJECTOR_FONT  # two digits at 24 px fit between
    wide = synth.make_trace(L=1, H=32)  # type: ignore[attr-defined]
    fig = token_set_grid(wide, set_attention(wide, "encoder_self", "keys", (0,)))
    assert list(fig.layout.xaxis.tickvals) == list(range(0, 32, 2))


def test_a_norm_set_is_coloured_against_its_largest_and_says_so(trace: Trace) -> None:
    """The norm measure: the squares are α‖f(x)‖ as such on hover, coloured as a share of the
    largest square, the title, colour bar and profile naming the measure."""
    L, H, Q, K = trace.encoder_self.shape  # type: ignore[union-attr]
    rng = np.random.default_rng(2)
    norms = HeadNorms(rng.uniform(1, 20, (L, H, K)).astype(np.float32), np.ones((L, H, Q)))
    trace = dataclasses.replace(trace, norms={"encoder_self": norms})
    result = set_attention(trace, "encoder_self", "keys", (0, 2), measure="norm")
    fig = token_set_grid(trace, result, "linear")
    (squares,) = fig.data
    top = float(result.summary.max())
    np.testing.assert_allclose(squares.marker.color, result.summary.ravel() / top, atol=1e-6)
    assert squares.marker.colorbar.title.text == f"norm α‖f(x)‖ ÷ {top:.3g} (linear colour)"
    assert "α‖f(x)‖ they give" in fig.layout.title.text
    assert f"{result.summary[0, 0]:.4f}" in squares.hovertext[0]
    profile = token_set_profile(trace, result, 1, 2)
    assert profile.layout.yaxis.title.text == "α‖f(x)‖"
    assert "α‖f(x)‖ each query gives the set" in profile.layout.title.text
