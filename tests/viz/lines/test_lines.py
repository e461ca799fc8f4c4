"""The lines view: a line per (query, key) above the threshold, coloured by head."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import lines_view
from attnlens.viz.lines.lines import LABEL_GAP, LINE_BUDGET, MAX_HEIGHT


def _lines(fig: object, head: int) -> set[tuple[int, int]]:
    """(query, key) pairs drawn as lines for one head."""
    pairs = set()
    for t in fig.data:  # type: ignore[attr-defined]
        if t.mode == "lines" and t.legendgroup == str(head) and t.customdata is not None:
            pairs |= {(int(a), int(b)) for a, b in np.asarray(t.customdata)[::3]}
    return pairs


def test_a_line_for_every_weight_above_the_threshold(trace: Trace) -> None:
    fig = lines_view(trace, "encoder_self", 1, heads=[2], min_weight=0.1)
    assert trace.encoder_self is not None
    w = trace.encoder_self[1, 2]
    expected = {(int(q), int(k)) for q, k in zip(*np.nonzero(w >= 0.1), strict=True)}
    assert _lines(fig, 2) == expected and _lines(fig, 0) == set()


def test_wider_lines_for_heavier_weights(synth: type) -> None:
    w = np.zeros((1, 1, 2, 2), dtype=np.float32)
    w[0, 0, 0] = [0.9, 0.1]
    w[0, 0, 1] = [0.3, 0.7]
    tr = synth.make_trace(src=("a", "b"), L=1, H=1, encoder_self=w)
    widths = {}
    for t in lines_view(tr, "encoder_self", 0).data:
        if t.mode == "lines" and t.customdata is not None:
            for a, b in np.asarray(t.customdata)[::3]:
                widths[(int(a), int(b))] = t.line.width
    assert widths[(0, 0)] > widths[(1, 1)] > widths[(1, 0)] > widths[(0, 1)]


def test_several_heads_get_their_own_colour_and_legend_entry(trace: Trace) -> None:
    fig = lines_view(trace, "cross", 0, heads=[0, 1])
    legend = {t.name: t.line.color for t in fig.data if t.showlegend is not False}
    assert set(legend) == {"head 0", "head 1"} and len(set(legend.values())) == 2


def test_both_columns_keep_repeated_tokens_and_hover_names_them(trace: Trace) -> None:
    fig = lines_view(trace, "encoder_self", 0, heads=[0], min_weight=0.0)
    left, right = (t for t in fig.data if t.mode == "text")
    assert list(left.text) == ["a", "b", "a", "&lt;/s&gt;"] and list(left.y) == [0, 1, 2, 3]
    assert list(left.x) == [-LABEL_GAP] * 4 and list(right.x) == [1 + LABEL_GAP] * 4
    hover = next(t for t in fig.data if t.mode == "markers").hovertext
    assert "query 2 a → key 3 &lt;/s&gt;" in "".join(hover)


def test_columns_of_different_lengths_span_the_same_height(trace: Trace) -> None:
    fig = lines_view(trace, "cross", 0, heads=[0], min_weight=0.0)
    left, right = (t for t in fig.data if t.mode == "text")
    assert list(left.y) == [0.0, 1.5, 3.0] and list(right.y) == [0.0, 1.0, 2.0, 3.0]
    lines = [t for t in fig.data if t.mode == "lines" and t.customdata is not None]
    ys = np.concatenate([np.asarray(t.y, dtype=float).reshape(-1, 3) for t in lines])
    assert {(a, b) for a, b, _ in ys} == {(a, b) for a in (0.0, 1.5, 3.0) for b in range(4)}


def test_markup_tokens_are_escaped(markup_trace: Trace) -> None:
    data = json.dumps(json.loads(lines_view(markup_trace, "cross", 0).to_json())["data"])
    assert "<b>" not in data and "<img" not in data and "&lt;img src=x" in data


def test_bad_head_is_named(trace: Trace) -> None:
    with pytest.raises(ValueError, match="head 7"):
        lines_view(trace, "cross", 0, heads=[7])


def test_a_long_input_keeps_a_bounded_height_and_labels_every_kth_token(synth: type) -> None:
    """The issue: on a ~370-token input the lines view grew to ~8,000 px."""
    words = [f"w{i}" for i in range(500)]
    w = np.zeros((1, 1, 500, 500), dtype=np.float32)
    for q in range(500):  # each query spreads over 40 keys: 20,000 weights above 0.02
        w[0, 0, q, (q + np.arange(40)) % 500] = 1 / 40
    tr = synth.make_trace(src=words, L=1, H=1, encoder_self=w)
    fig = lines_view(tr, "encoder_self", 0, heads=[0])
    assert fig.layout.height <= MAX_HEIGHT
    left, _ = (t for t in fig.data if t.mode == "text")
    written = [t for t in left.text if t]
    assert 10 <= len(written) <= 60 and len(left.text) == 500  # each row still its own
    assert left.hovertext[499] == "position 499 w499"  # and the hover names it
    drawn = sum(len(t.x) // 3 for t in fig.data if t.mode == "lines" and t.customdata is not None)
    assert drawn <= LINE_BUDGET and "the strongest" in fig.layout.title.text
    row_px = (fig.layout.height - 120) / 500
    widths = [t.line.width for t in fig.data if t.mode == "lines" and t.customdata is not None]
    assert max(widths) <= max(1.0, 0.8 * row_px)  # lines never merge into bars
    tall = lines_view(tr, "encoder_self", 0, heads=[0], text_px=24)
    assert len([t for t in next(t for t in tall.data if t.mode == "text").text if t]) < len(written)


def test_labels_stand_clear_of_the_lines_and_one_head_needs_no_legend(trace: Trace) -> None:
    """The issue: thick lines ended on the token labels, drawing bars over them."""
    fig = lines_view(trace, "cross", 0, heads=[1])
    left, right = (t for t in fig.data if t.mode == "text")
    lines = [t for t in fig.data if t.mode == "lines" and t.customdata is not None]
    xs = np.concatenate([np.asarray(t.x, dtype=float) for t in lines])
    assert np.nanmin(xs) == 0.0 and np.nanmax(xs) == 1.0
    assert left.x[0] < 0.0 and left.textposition == "middle left"
    assert right.x[0] > 1.0 and right.textposition == "middle right"
    assert fig.layout.showlegend is False and "head 1" in fig.layout.title.text
    assert lines_view(trace, "cross", 0, heads=[0, 1]).layout.showlegend is True


def test_readable_tokens_are_drawn_and_raw_ones_hovered(synth: type) -> None:
    tr = replace(synth.make_trace(src=("Ġthe", "Ġcat", "</s>")), src_shown=(" the", " cat", "</s>"))
    fig = lines_view(tr, "encoder_self", 0, heads=[0], min_weight=0.0)
    left = next(t for t in fig.data if t.mode == "text")
    assert list(left.text) == [" the", " cat", "&lt;/s&gt;"]
    assert left.hovertext[0] == "position 0  the (token Ġthe)"
