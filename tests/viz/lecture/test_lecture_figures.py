"""The lecture's figures, checked by their data: each shows what its section is about."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from attnlens.model.decoding.sampling import Sampling
from attnlens.record.trace import ModelInfo
from attnlens.viz.lecture.architecture import ATTENTION_NAMES, HIGHLIGHT, architecture_diagram
from attnlens.viz.lecture.causal_build import causal_build
from attnlens.viz.lecture.heads_row import heads_row
from attnlens.viz.lecture.input_positions import input_positions
from attnlens.viz.lecture.output_softmax import (
    REST,
    STRATEGY_TICK_ANGLE,
    next_token_bars,
    reshape,
    strategies_view,
)
from attnlens.viz.lecture.padding_view import padding_masks, padding_view
from attnlens.viz.lecture.qkv_view import PRINTED_UP_TO, qkv_view
from attnlens.viz.lecture.reveal import RIGHT, blank_row, class_answers, head_scores, where_reveal
from attnlens.viz.lecture.saturation import saturation, saturation_view, telling_row
from attnlens.viz.shared.style import PROJECTOR_FONT, projector
from helpers import synth
from helpers.panel_labels import labels_over_neighbours

ENC_DEC = ModelInfo("translate", "encoder-decoder", 2, 4, 64)


def texts(fig) -> str:  # type: ignore[no-untyped-def]
    return " | ".join(a.text or "" for a in fig.layout.annotations)


def read(words: str) -> str:
    """Wrapped words as one reads them: a line broken after a hyphen or dash joins the next."""
    return words.replace("-<br>", "-").replace("–<br>", "–").replace("<br>", " ")


def test_figure_1_names_each_attention_where_it_sits_and_outlines_one() -> None:
    fig = architecture_diagram(ENC_DEC, "<b>cat</b>", "<s> gat", highlight="cross")
    words = texts(fig)
    parts = (
        "Input Embedding",
        "Output Embedding (shifted right)",
        "Masked Multi-Head Attention",
        "Feed Forward",
        "Add & Norm",
        "Linear",
        "Softmax",
        "memory: K and V",
        "N = 2 ×",
    )
    for part in parts:
        assert part in read(words), part
    for name in ATTENTION_NAMES.values():  # long names wrap to fit beside the stacks
        assert name in read(words)
    # at 1400 px the Lecture's stacks are ~180 px wide and their sides ~130 px: the attention
    # blocks' bold words (the paper's lines) and the names beside them in short lines
    assert "<b>Masked<br>Multi-Head<br>Attention</b>" in words
    assert "masked<br>decoder<br>self-<br>attention" in words
    assert "&lt;b&gt;cat&lt;/b&gt;" in words and "<b>cat</b>" not in words  # text, not markup
    lit = [s for s in fig.layout.shapes if s.line.color == HIGHLIGHT]
    assert len(lit) == 1 and lit[0].x0 > 6  # the decoder's second attention block
    assert "N = 2 layers, h = 4 heads, d_model = 64" in fig.layout.title.text


def test_a_decoder_only_model_has_one_stack_and_says_why() -> None:
    fig = architecture_diagram(ModelInfo("lm", "decoder", 3, 4, 64), "", "<s> T h e")
    words = texts(fig)
    assert "Input Embedding" not in words and "memory: K and V" not in words
    assert "decoder-only: no encoder" in words and "N = 3 ×" in words
    named = [read(a.text) for a in fig.layout.annotations if a.showarrow and a.text]
    assert named == [ATTENTION_NAMES["decoder_self"]]  # the arrows naming attentions


def test_unscaled_dot_products_saturate_the_softmax_as_d_k_grows() -> None:
    curve = saturation()
    assert list(curve.unscaled) == sorted(curve.unscaled) and curve.unscaled[-1] > 0.9
    assert max(curve.scaled) - min(curve.scaled) < 0.1 and max(curve.scaled) < 0.5
    q = np.random.default_rng(1).normal(size=(3, 16))
    k = np.random.default_rng(2).normal(size=(4, 16))
    fig = saturation_view(q, k, 1, "b", ["w", "x", "y", "z"])
    lines, bars = fig.data[:2], fig.data[2:]
    assert list(lines[0].x) == list(curve.d_ks)
    unscaled, scaled = (np.asarray(b.y) for b in bars)
    assert unscaled.sum() == pytest.approx(1) and scaled.sum() == pytest.approx(1)
    assert unscaled.max() >= scaled.max()  # dividing by √d_k can only soften the row
    with pytest.raises(ValueError, match="query 5"):
        saturation_view(q, k, 5, "b", ["w", "x", "y", "z"])


def test_the_qkv_view_computes_the_weights_from_q_k_v() -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    mask = np.tril(np.ones((3, 3), bool))
    fig = qkv_view(q, k, v, ["a", "b", "c"], ["a", "b", "c"], mask, query=2)
    weights = np.asarray(fig.data[3].z)
    scores = np.where(mask, q @ k.T / 2.0, -np.inf)
    expected = np.exp(scores - scores.max(1, keepdims=True))
    np.testing.assert_allclose(weights, expected / expected.sum(1, keepdims=True), atol=1e-12)
    assert [t.name for t in fig.data] == ["Q", "K/V", "K/V", "weights", "masked"]
    assert len(fig.layout.shapes) == 2  # the query's row, in Q and in the weights
    # the rows are named once, left of Q: the weights' own names sat in the narrow gap after V
    # and ran onto it (hidden under its cells in the dark theme, on the Lecture's slide 4)
    shown = [fig.layout[f"yaxis{i or ''}"].showticklabels is not False for i in (0, 2, 3, 4)]
    assert shown == [True, False, False, False]
    assert [fig.layout[f"yaxis{i}"].ticks for i in (2, 3, 4)] == ["", "", ""]  # nor their marks


def test_the_qkv_view_prints_weights_only_while_cells_can_hold_them() -> None:
    rng = np.random.default_rng(1)
    for n, printed in ((PRINTED_UP_TO, True), (PRINTED_UP_TO + 2, False)):
        q, k, v = (rng.normal(size=(n, 4)) for _ in range(3))
        tokens = [f"t{i}" for i in range(n)]
        weights = qkv_view(q, k, v, tokens, tokens).data[3]
        assert weights.name == "weights"
        if printed:
            assert list(weights.text[0][:2]) == [f"{x:.2f}" for x in weights.z[0][:2]]
            assert "hover a cell" not in qkv_view(q, k, v, tokens, tokens).layout.title.text
        else:  # at 14 tokens "0.37" ran past its cell on slide 4: the hover gives each weight
            assert weights.text is None and weights.texttemplate is None
            assert "hover a cell" in qkv_view(q, k, v, tokens, tokens).layout.title.text


def test_every_head_of_a_layer_side_by_side() -> None:
    tr = synth.make_trace(L=2, H=3)
    fig = heads_row(tr, "encoder_self", 1)
    assert [t.name for t in fig.data] == ["head 0", "head 1", "head 2"]
    np.testing.assert_allclose(np.asarray(fig.data[2].z), tr.encoder_self[1, 2], rtol=1e-6)  # type: ignore[index]
    with pytest.raises(ValueError, match="layer 2"):
        heads_row(tr, "encoder_self", 2)


@pytest.mark.parametrize("present", [False, True])
def test_the_heads_query_labels_sit_left_of_the_first_panel_only(present: bool) -> None:
    """Plotly draws a y axis's labels left of its panel's x domain: drawn for every panel, they
    sat in the gap between panels, over the previous head's cells (slide 6, light and dark)."""
    fig = heads_row(synth.make_trace(L=1, H=4), "encoder_self", 0)
    if present:
        projector(fig, PROJECTOR_FONT)
    labelled = [axis for axis in fig.select_yaxes() if axis.showticklabels is not False]
    assert [axis.plotly_name for axis in labelled] == ["yaxis"]
    first = fig.layout.xaxis.domain
    starts = sorted(axis.domain[0] for axis in fig.select_xaxes())
    assert first[0] == starts[0] == 0.0  # the labels' panel is the leftmost: its left is margin
    assert labelled[0].side in (None, "left") and fig.layout.xaxis.anchor in (None, "y")
    for left, right in itertools.pairwise(sorted(a.domain for a in fig.select_xaxes())):
        assert left[1] < right[0]  # panels side by side, none over another
    assert all(axis.matches == "y" for axis in fig.select_yaxes() if axis.plotly_name != "yaxis")


def test_the_causal_mask_grows_one_row_per_token() -> None:
    tr = synth.make_trace(tgt=("<s>", "x", "y", "z"), L=1, H=2)
    fig = causal_build(tr, 0, 1, 2)
    mask, weights = (np.asarray(t.z, dtype=float) for t in fig.data)
    assert np.isnan(mask[3]).all() and np.isnan(weights[3]).all()  # not written yet
    np.testing.assert_array_equal(mask[:3], np.tril(np.ones((4, 4)))[:3])
    assert np.isnan(weights[1, 2:]).all() and weights[2, :3].sum() == pytest.approx(1, abs=1e-5)
    assert (
        "positions 0–2" in fig.layout.title.text
        and "1 later position masked" in fig.layout.title.text
    )
    with pytest.raises(ValueError, match="step 4"):
        causal_build(tr, 0, 1, 4)


def test_padding_masks_hide_the_pads_from_every_query() -> None:
    masks = padding_masks([3, 5])
    assert masks.shape == (2, 5, 5)
    assert masks[0, :, :3].all() and not masks[0, :, 3:].any() and masks[1].all()
    fig = padding_view([["a", "b", "</s>"], ["c", "d", "e", "f", "</s>"]], ["this", "that"])
    assert list(fig.data[0].x)[3:] == ["3 · &lt;pad&gt;", "4 · &lt;pad&gt;"]
    assert "this: 3 tokens + 2 pad" in texts(fig)
    with pytest.raises(ValueError, match="at least one token"):
        padding_masks([0, 2])


def test_positions_of_this_input_and_their_likeness() -> None:
    tr = synth.make_trace(src=("a", "b", "c", "</s>"), d_model=8)
    fig = input_positions(tr, dims=4)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), tr.positional_encoding[:4, :4], rtol=1e-6)  # type: ignore[index]
    similar = np.asarray(fig.data[1].z)
    np.testing.assert_allclose(np.diag(similar), 1.0, rtol=1e-6)
    from dataclasses import replace

    with pytest.raises(ValueError, match="scheme: rotary"):
        input_positions(replace(tr, positional_encoding=None, positional_scheme="rotary"))


def test_the_next_token_bars_and_their_hidden_twin() -> None:
    run = synth.greedy_run()
    fig = next_token_bars(run, 1)
    probs = list(fig.data[0].x)
    assert probs[:2] == [0.6, 0.3] and probs[-1] == pytest.approx(0.1)
    assert fig.data[0].marker.color[0] == "#d62728"  # greedy took "e"
    hidden = next_token_bars(run, 1, hide=True)
    assert list(hidden.data[0].y) == ["&lt;/s&gt;", "e"] and set(hidden.data[0].text) == {"?"}


SETTINGS = [  # (T, top-k, top-p) the five most probable tokens decide, and those they do not
    (1.0, None, None, True), (1.0, None, 0.5, True), (1.0, None, 0.99, False),
    (1.5, 3, 0.9, True), (0.5, 5, None, True), (2.0, 2, 0.3, True),
    (1.5, None, None, False), (1.0, 8, None, False), (0.7, None, 0.9, False),
]  # fmt: skip


@pytest.mark.parametrize(("temperature", "top_k", "top_p", "exact"), SETTINGS)
def test_what_sampling_draws_from_is_the_samplers_own_distribution_or_not_drawn(
    temperature: float, top_k: int | None, top_p: float | None, exact: bool
) -> None:
    """Recomputed by the sampler itself over a whole vocabulary of 40, of which the chart
    knows the five most probable (a decoding step records five candidates). The five alone,
    renormalised among themselves, showed T = 1 with no cut as a reshaped distribution."""
    logits = 3 * torch.randn(1, 40, generator=torch.Generator().manual_seed(3))
    log_p = torch.log_softmax(logits, -1)  # the five most probable hold 0.73
    top = log_p[0].topk(5)
    tokens, probs = [f"t{i}" for i in top.indices.tolist()], top.values.exp().tolist()
    shaped = reshape(tokens, probs, temperature, top_k, top_p)
    assert shaped.tokens == (*tokens, REST)
    assert shaped.before == pytest.approx((*probs, 1 - sum(probs)))
    if not exact:
        assert shaped.after is None
        return
    drawn = Sampling(temperature, top_k, top_p, seed=0).distribution(log_p)[0]
    rest = float(drawn.sum() - drawn[top.indices].sum())
    assert shaped.after == pytest.approx((*drawn[top.indices].tolist(), rest), abs=1e-6)
    assert shaped.kept == (*(drawn[top.indices] > 0).tolist(), rest > 0)
    if temperature == 1.0 and top_p is None:
        assert shaped.after == pytest.approx(shaped.before)  # nothing reshaped


def test_the_strategies_view_draws_what_sampling_draws_from_only_when_known() -> None:
    runs = {"greedy": synth.greedy_run(), "beam": synth.beam_run()}
    known = reshape(["a", "b", "c"], [0.5, 0.3, 0.1], 1.5, top_k=2)
    fig = strategies_view(runs, 0, known, "T = 1.5, top-k 2")
    assert list(fig.data[0].y) == ["greedy", "beam"] and list(fig.data[2].y) == list(known.after)
    assert list(fig.data[2].x)[-1] == REST
    unknown = reshape(["a", "b", "c"], [0.5, 0.3, 0.1], 1.5)
    fig = strategies_view(runs, 0, unknown, "T = 1.5")
    assert [t.name for t in fig.data] == ["score", "model: p"]
    assert "needs every token's p" in fig.layout.annotations[1].text.replace("<br>", " ")


def test_the_reveal_marks_the_asked_row_and_the_right_cell() -> None:
    tr = synth.make_trace()
    fig = where_reveal(tr, "encoder_self", 1, 2, query=3, answer=1)
    row, cell = fig.layout.shapes[-2:]
    assert (row.y0, row.y1, cell.x0, cell.x1) == (2.5, 3.5, 0.55, 1.45)
    assert cell.line.color == RIGHT
    hidden = blank_row(where_reveal(tr, "encoder_self", 1, 2, 3, 1), 3, ("weight",))
    assert np.isnan(np.asarray(hidden.data[0].z, dtype=float)[3]).all()
    assert not np.isnan(np.asarray(hidden.data[0].z, dtype=float)[2]).any()


def test_blanking_a_cross_row_hides_its_true_source_too() -> None:
    tr = synth.make_trace(src=("a", "b", "c", "</s>"), tgt=("<s>", "x", "y"))
    fig = where_reveal(tr, "cross", 1, 0, query=1, answer=2, reference=(2, 1, 0))
    assert "true source" in fig.layout.title.subtitle.text
    hidden = blank_row(fig, 1, ("weight",))
    circles = next(t for t in hidden.data if t.name == "true source")
    assert len(circles.x) == 2 and "1 · x" not in list(circles.y)
    assert not hidden.layout.title.subtitle.text


def test_the_class_histogram_counts_beside_the_truth() -> None:
    fig = class_answers(["0 · <b>", "1 · b", "2 · c"], [1, 3, 1], 1)
    bar = fig.data[0]
    assert list(bar.x) == [1, 3, 1] and bar.marker.color[1] == RIGHT
    assert bar.y[0] == "A · 0 · &lt;b&gt;" and bar.y[1].endswith("✓")
    assert fig.layout.title.text == "the class: 3 of 5 right"
    scores = head_scores([0.1, 0.9, 0.3], 1, "previous")
    assert scores.data[0].marker.color[1] == RIGHT
    with pytest.raises(ValueError, match="2 counts"):
        class_answers(["a", "b", "c"], [1, 2], 0)


@pytest.mark.parametrize("present", [False, True])
def test_no_panel_names_its_rows_over_its_neighbour(present: bool) -> None:
    """The padding slide's second sentence named its rows left of its panel, over the first
    sentence's last column; the embeddings slide named the likeness panel's rows over the
    table's colour bar (slides 9 and 3, light and dark). Each row label now faces the margin."""
    tr = synth.make_trace(src=("a", "b", "c", "</s>"), d_model=8)
    three = [["a", "b", "</s>"], ["c", "d", "e", "f", "</s>"], ["g", "</s>"]]
    figures = {
        "padding": padding_view(three[:2], ["this", "that"]),
        "padding of 3": padding_view(three),
        "embeddings": input_positions(tr, dims=4),
        "heads": heads_row(synth.make_trace(L=1, H=4), "encoder_self", 0),
    }
    for name, fig in figures.items():
        if present:
            projector(fig, PROJECTOR_FONT)
        assert not labels_over_neighbours(fig), name
    padding = figures["padding"]
    assert padding.layout.yaxis.showticklabels and padding.layout.yaxis2.side == "right"
    assert list(padding.data[1].y)[3] == "3 · f"  # the second sentence still names its rows
    middle = figures["padding of 3"].layout.yaxis2
    assert middle.showticklabels is False  # its columns name the same tokens
    likeness = figures["embeddings"].layout.yaxis2
    assert likeness.showticklabels is False and likeness.matches == "y"


def test_the_sampled_tokens_are_slanted_not_upright_on_a_projector() -> None:
    """Left to Plotly, the sampling slide's labels at 24 px stood upright ("(every other
    token)" down half the figure) and squeezed its bars; they keep a fixed slant."""
    runs = {"greedy": synth.greedy_run(), "beam": synth.beam_run()}
    shaped = reshape(["ca", "kasa", "the", "antik", "dom"], [0.5, 0.3, 0.02, 0.01, 0.01], 1.5, 3)
    fig = projector(strategies_view(runs, 4, shaped, "T = 1.5, top-k 3"), PROJECTOR_FONT)
    assert fig.layout.xaxis2.tickangle == STRATEGY_TICK_ANGLE
    assert -60 <= STRATEGY_TICK_ANGLE <= -20  # readable along a slant, never upright
    lines = [a.text.count("<br>") + 1 for a in fig.layout.annotations[:2]]
    assert lines[0] <= 2, lines  # the scores' title took three lines of 24 px


def test_the_scaling_slide_singles_out_the_row_the_division_changes_most() -> None:
    """It showed the head's most peaked row: on translate, query 5 · </s> with 0.99 on one key
    scaled or not, two equal bars that show nothing of what √d_k does."""
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(5, 16)), rng.normal(size=(6, 16))
    q[2] = 3 * k[4]  # peaked whether divided or not: the most peaked row
    allowed = np.ones((5, 6), bool)
    allowed[0, 1:] = False  # a row with one key is 1.0 either way
    row = telling_row(q, k, allowed)
    changes = []
    for r in range(5):
        fig = saturation_view(q, k, r, "t", list("abcdef"), allowed)
        unscaled, scaled = (np.asarray(b.y, dtype=float) for b in fig.data[2:])
        changes.append(unscaled.max() - scaled.max())
    assert row == int(np.argmax(changes)) and row not in (0, 2)
    assert changes[row] > 0.2  # the figure shows a real difference
    fig = projector(saturation_view(q, k, row, "t", list("abcdef")), PROJECTOR_FONT)
    titles = [a.text for a in fig.layout.annotations[:2]]
    assert all(t.count("<br>") <= 1 for t in titles), titles  # at most two lines each
    assert "d_k\u00a0=\u00a016" in titles[1]  # never broken as "d_k" over "= 16"
