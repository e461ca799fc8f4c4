"""Margins estimated from the labels (viz/shared/margins.py), before Plotly draws the figure."""

from __future__ import annotations

import pytest

from attnlens import viz
from attnlens.record.trace import Trace
from attnlens.viz.heads.heatmap import SUBTITLE_PX, grid_layout
from attnlens.viz.shared.labels import escape, position_labels, token_axis
from attnlens.viz.shared.margins import (
    AXIS_ROOM,
    TITLE_LINE,
    TITLE_ROOM,
    balanced_lines,
    plain_lines,
    text_px,
)

# Widths Debian's Chromium measured (SVG getBBox) for these labels on the app's page, in
# Streamlit's figure font (Source Sans, 12 px): the estimate must not fall short of them (else
# Plotly draws the figure twice), nor be so wide that the plot loses much room.
MEASURED_PX = {
    "13 · H → end": 59.0, "WWWWWMMMMM": 90.8, "11 · </s>": 40.9, "0 · H": 21.6,
    "12 · ␣ → ␣": 47.2, "3 · 漢字": 29.4, "7 · ##ization": 59.4, "499 · [SEP]": 52.5,
    "5 · Ġthe": 37.7,
}  # fmt: skip


def test_plain_lines_reads_markup_as_drawn() -> None:
    assert plain_lines("a &lt;b&gt; &amp; c<br>second <b>line</b>") == ["a <b> & c", "second line"]


@pytest.mark.parametrize(("label", "measured"), list(MEASURED_PX.items()))
def test_the_estimate_covers_what_the_browser_measured(label: str, measured: float) -> None:
    estimate = text_px(escape(label))
    assert measured <= estimate <= measured * 2


def test_wider_glyphs_and_longer_labels_get_more_room() -> None:
    assert text_px("WWW") > text_px("iii")
    assert text_px("漢字") > text_px("ab")  # a wide character takes a full em
    assert text_px("abc") < text_px("abcd")
    assert text_px("abc", 24) == pytest.approx(2 * text_px("abc", 12))
    assert text_px("short<br>a much longer line") == text_px("a much longer line")


def test_grid_margins_hold_the_widest_label_of_each_axis_and_every_title_line() -> None:
    rows = token_axis(position_labels(["a", "a very long token indeed", "b"]))
    cols = token_axis(position_labels(["x", "y"]))
    one = grid_layout("title", cols, rows)["margin"]
    two = grid_layout("title<br>second line", cols, rows)["margin"]
    assert one["l"] >= text_px(rows.values[1]) + AXIS_ROOM
    assert one["b"] >= text_px(cols.values[1]) + AXIS_ROOM
    assert one["l"] > one["b"]  # the long token is a row
    assert (one["t"], two["t"]) == (TITLE_ROOM + TITLE_LINE, TITLE_ROOM + 2 * TITLE_LINE)


def test_a_subtitle_is_lifted_clear_of_the_plot_with_room_above_for_it() -> None:
    """Plotly rests a title on the plot by its first line; the line under it came out over
    the top row until the title's padding grew by the subtitle's height."""
    axis = token_axis(position_labels(["a", "b"]))
    plain, sub = grid_layout("t", axis, axis), grid_layout("t", axis, axis, subtitle="found: 1")
    assert sub["title"]["subtitle"]["text"] == "found: 1" and not plain["title"]["subtitle"]["text"]
    assert sub["title"]["pad"]["b"] == plain["title"]["pad"]["b"] + SUBTITLE_PX
    assert sub["margin"]["t"] == plain["margin"]["t"] + TITLE_LINE + SUBTITLE_PX


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("decoder position: input → produced", ("decoder position:", "input → produced")),
        ("query", ("query",)),
        ("a b", ("a", "b")),
        ("two<br>lines already", ("two", "lines already")),
    ],
)
def test_a_label_is_balanced_over_two_lines_at_a_space(text: str, lines: tuple[str, ...]) -> None:
    assert tuple(plain_lines(balanced_lines(text))) == lines


def test_thinned_ticks_are_measured_by_the_labels_drawn() -> None:
    """An axis that labels every k-th position leaves room for those labels only."""
    tokens = ["x"] * 40
    tokens[1] = "a token far longer than the others"  # position 1: not labelled at k = 2
    axis = token_axis(position_labels(tokens), limit=20)
    assert "ticktext" in axis.ticks
    margin = grid_layout("t", axis, axis)["margin"]
    assert margin["b"] < text_px(axis.values[1]) + AXIS_ROOM


def test_the_head_heatmap_keeps_automargin_behind_its_estimate(trace: Trace) -> None:
    """The estimate comes first; automargin still grows a side it fell short on."""
    fig = viz.head_heatmap(trace, "encoder_self", 0, 0)
    layout = fig.layout
    assert layout.margin.l > AXIS_ROOM and layout.margin.b > AXIS_ROOM
    assert layout.xaxis.automargin and layout.yaxis.automargin and layout.title.automargin
