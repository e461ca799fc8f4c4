"""The head heatmap, checked by its data."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Trace
from attnlens.viz import head_heatmap
from attnlens.viz.heads.heatmap import MAX_HEIGHT, reference_hits
from attnlens.viz.shared.labels import MAX_TICKS


def test_cells_hold_the_exact_weights_and_every_position_is_its_own_row(trace: Trace) -> None:
    fig = head_heatmap(trace, "encoder_self", 1, 2)
    (weights,) = fig.data  # nothing masked: no grey layer
    assert trace.encoder_self is not None
    np.testing.assert_array_equal(weights.customdata, trace.encoder_self[1, 2])  # the hover's
    np.testing.assert_allclose(weights.z, np.cbrt(trace.encoder_self[1, 2]), rtol=1e-6)
    # 'a' appears twice in the source: both keep their own column and row
    assert list(weights.x) == ["0 · a", "1 · b", "2 · a", "3 · &lt;/s&gt;"]
    assert list(weights.y) == list(weights.x)
    assert "%{customdata:.4f}" in weights.hovertemplate and "%{y}" in weights.hovertemplate
    assert weights.colorbar.title.text == "weight (colour ∝ ∛weight)"


def test_linear_on_request_colours_the_weights_themselves(trace: Trace) -> None:
    (weights,) = head_heatmap(trace, "encoder_self", 1, 2, scale="linear").data
    assert trace.encoder_self is not None
    np.testing.assert_array_equal(weights.z, trace.encoder_self[1, 2])
    assert weights.customdata is None and "%{z:.4f}" in weights.hovertemplate
    assert weights.colorbar.title.text == "weight (linear colour)"
    with pytest.raises(ValueError, match="scale must be one of perceptual, linear, got 'log'"):
        head_heatmap(trace, "encoder_self", 1, 2, scale="log")  # type: ignore[arg-type]


def test_perceptual_ticks_read_as_weights_where_they_sit(trace: Trace) -> None:
    (weights,) = head_heatmap(trace, "encoder_self", 1, 2).data
    bar = weights.colorbar
    assert list(bar.ticktext) == ["0", "0.001", "0.01", "0.05", "0.2", "0.5", "1"]
    np.testing.assert_allclose(bar.tickvals, np.cbrt([0, 0.001, 0.01, 0.05, 0.2, 0.5, 1]), 1e-6)


def test_masked_cells_are_a_grey_layer_not_a_low_weight(trace: Trace) -> None:
    weights, masked = head_heatmap(trace, "decoder_self", 0, 0).data
    above = np.triu(np.ones((3, 3), dtype=bool), 1)
    assert np.isnan(weights.z[above]).all() and not np.isnan(weights.z[~above]).any()
    assert (masked.z[above] == 1).all() and np.isnan(masked.z[~above]).all()
    assert "masked" in masked.hovertemplate
    assert weights.hoverongaps is False and masked.hoverongaps is False  # one answer per cell


def test_cross_attention_rows_say_input_and_produced_token(trace: Trace) -> None:
    """Row i of the decoder is fed token i and produces token i + 1: the circle on a row is
    about the produced token, so the row says both (the issue: '4 · 6' circled at the month)."""
    fig = head_heatmap(trace, "cross", 0, 1)
    (weights,) = fig.data
    assert weights.z.shape == (3, 4)
    assert list(weights.y) == ["0 · &lt;s&gt; → x", "1 · x → y", "2 · y → end"]
    assert fig.layout.yaxis.title.text == "decoder position: input → produced"
    decoder = head_heatmap(trace, "decoder_self", 0, 1).data[0]
    assert list(decoder.y) == list(weights.y) and list(decoder.x) == [
        "0 · &lt;s&gt;",
        "1 · x",
        "2 · y",
    ]
    encoder = head_heatmap(trace, "encoder_self", 0, 1)
    assert encoder.layout.yaxis.title.text == "query" and encoder.data[0].y[0] == "0 · a"


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
    assert list(circles.x) == ["2 · a", "1 · b"]
    assert list(circles.y) == ["0 · &lt;s&gt; → x", "1 · x → y"]
    assert fig.layout.title.subtitle.text == "argmax on the true source: 1 of 2 output tokens"
    assert reference_hits(tr, 0, 1, (2, 1)) == 1 and reference_hits(tr, 0, 0, (2, 0, 3)) == 3
    assert not head_heatmap(tr, "cross", 0, 0).layout.title.subtitle.text


@pytest.mark.parametrize("reference", [(0, 1, 2, 3), (4,), (-1,)])
def test_a_reference_that_does_not_fit_is_refused(trace: Trace, reference: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        head_heatmap(trace, "cross", 0, 0, reference=reference)


def _long_trace(synth: type, n: int) -> Trace:
    words = [f"w{i % 50}" for i in range(n)]
    return synth.make_trace(src=words, tgt=("<s>", "x"), L=1, H=1)


def test_a_long_input_draws_cells_without_gaps_and_labels_every_kth_token(synth: type) -> None:
    """The issue: at ~370 tokens cells under 1 px were covered by the 1 px gaps (blank)."""
    tr = _long_trace(synth, 500)
    fig = head_heatmap(tr, "encoder_self", 0, 0)
    (weights,) = fig.data
    assert weights.xgap == 0 and weights.ygap == 0
    assert len(weights.x) == len(weights.y) == 500  # hover still names every position
    assert weights.x[499] == "499 · w49"
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert len(axis.tickvals) <= MAX_TICKS and len(axis.tickvals) == len(axis.ticktext)
        assert set(axis.tickvals) <= set(weights.x)  # ticks name real positions
    assert fig.layout.height <= MAX_HEIGHT
    short = head_heatmap(tr_short := synth.make_trace(), "encoder_self", 0, 0)
    assert short.data[0].xgap == 1 and short.layout.xaxis.tickvals is None
    assert len(short.data[0].x) == len(tr_short.src_tokens)


def test_tokens_show_as_read_with_the_raw_token_in_the_hover(synth: type) -> None:
    tr = replace(
        synth.make_trace(src=("[CLS]", "token", "##ization", "[SEP]")),
        src_shown=("[CLS]", "token", "ization", "[SEP]"),
    )
    fig = head_heatmap(tr, "encoder_self", 0, 0)
    (weights,) = fig.data
    assert weights.x[2] == "2 · ization (token ##ization)" and weights.x[1] == "1 · token"
    assert list(fig.layout.xaxis.ticktext) == ["0 · [CLS]", "1 · token", "2 · ization", "3 · [SEP]"]
    assert list(fig.layout.xaxis.tickvals) == list(weights.x)
    assert "%{x}" in weights.hovertemplate


def test_no_title_overlaps_the_key_axis(trace: Trace) -> None:
    """Keys below the grid; the title alone above it, pushing the margin as it needs."""
    layout = head_heatmap(trace, "cross", 0, 0, reference=(0, 1)).layout
    assert layout.xaxis.side in (None, "bottom") and layout.title.automargin is True
    assert layout.xaxis.automargin is True and layout.yaxis.automargin is True


def test_the_norm_measure_shows_weight_times_norm_and_says_so(trace: Trace) -> None:
    """αᵢⱼ ‖f_h(xⱼ)‖ as a share of the head's largest, named in the title and the colour bar;
    a record without norms is refused, saying why."""
    assert trace.encoder_self is not None
    L, H, S, _ = trace.encoder_self.shape
    rng = np.random.default_rng(4)
    norms = HeadNorms(rng.random((L, H, S)).astype(np.float32), np.ones((L, H, S), np.float32))
    trace = replace(trace, norms={"encoder_self": norms})
    fig = head_heatmap(trace, "encoder_self", 1, 2, scale="linear", measure="norm")
    assert trace.norms is not None
    want = trace.encoder_self[1, 2] * trace.norms["encoder_self"].carried[1, 2][None, :]
    np.testing.assert_allclose(fig.data[0].z, want / want.max(), rtol=1e-5)
    assert "norm α‖f(x)‖" in fig.layout.title.text
    assert fig.data[0].colorbar.title.text.startswith("norm α‖f(x)‖ ÷ ")
    assert "norm" not in head_heatmap(trace, "encoder_self", 1, 2).layout.title.text
    with pytest.raises(ValueError, match="holds no norms"):
        head_heatmap(replace(trace, norms=None), "encoder_self", 1, 2, measure="norm")
