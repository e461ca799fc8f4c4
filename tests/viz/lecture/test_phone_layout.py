"""A slide's figure laid out again for a phone (issue 49), checked on its layout: panels side by
side come out stacked, each the full width with its title over it; the colour bar lies under
its own panel; category labels are all there when they fit and evenly thinned when not, a long
row label cut; cell numbers leave cells too narrow for them; text is a phone's size."""

from __future__ import annotations

import itertools

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.viz.lecture.phone_layout import LABEL_PX, PHONE_PX, TICKS, TITLE, phone_layout
from attnlens.viz.shared.margins import text_px

TOKENS = ["0 · the", "1 · cat", "2 · sees", "3 · a", "4 · house", "5 · </s>"]


def heads(columns: int = 6, numbers: bool = False) -> go.Figure:
    """Four heads side by side, as the slides make them: shared rows, one colour bar."""
    fig = make_subplots(1, 4, shared_yaxes=True, subplot_titles=[f"head {h}" for h in range(4)])
    keys = [f"{i} · k{i}" for i in range(columns)]
    for h in range(4):
        cells = "%{z:.2f}" if numbers else None
        fig.add_trace(go.Heatmap(z=[[0.5] * columns] * 6, x=keys, y=TOKENS, showscale=h == 3,
                                 texttemplate=cells), 1, h + 1)  # fmt: skip
    fig.update_layout(title="encoder self-attention, layer 0: the same input through each of "
                      "its 4 heads", height=640, font_size=18, margin_t=190)  # fmt: skip
    return fig


def axis(letter: str, i: int) -> str:
    """The name of panel i's x or y axis: xaxis, xaxis2, …"""
    return f"{letter}axis{i + 1 if i else ''}"


def test_panels_side_by_side_are_stacked_each_the_full_width() -> None:
    fig = phone_layout(heads())
    domains = [fig.layout[axis("y", i)].domain for i in range(4)]
    assert all(fig.layout[axis("x", i)].domain == (0.0, 1.0) for i in range(4))
    tops = [d[1] for d in domains]
    assert tops == sorted(tops, reverse=True) and tops[0] == 1.0  # head 0 on top
    for upper, lower in itertools.pairwise(domains):
        assert lower[1] < upper[0]  # no two panels share a height
    titles = {n.text: n for n in fig.layout.annotations}
    for h, (_, top) in enumerate(domains):
        assert titles[f"head {h}"].y == top and titles[f"head {h}"].yanchor == "bottom"
    assert all(fig.layout[axis("y", i)].showticklabels for i in range(4))  # rows on each
    assert fig.layout.height > 640  # as tall as four plots need


def test_the_colour_bar_lies_under_its_own_panel_no_wider_than_the_plot() -> None:
    fig = phone_layout(heads())
    bar = fig.data[3].colorbar
    assert bar.orientation == "h" and bar.len <= 1 and bar.lenmode in (None, "fraction")
    assert bar.y < fig.layout.yaxis4.domain[0]  # under the last panel (head 3's)


def test_labels_are_all_shown_when_they_fit_and_thinned_evenly_when_not() -> None:
    fig = phone_layout(heads())
    assert list(fig.layout.xaxis.tickvals) == [f"{i} · k{i}" for i in range(6)]  # every key
    assert list(fig.layout.yaxis.ticktext) == TOKENS
    many = phone_layout(heads(columns=40))
    shown = list(many.layout.xaxis.tickvals)
    assert 5 <= len(shown) < 40 and shown[0] == "0 · k0"
    step = int(shown[1].split(" ")[0])
    assert all(int(v.split(" ")[0]) == i * step for i, v in enumerate(shown))  # evenly


def test_a_long_row_label_is_cut_and_the_rows_title_goes_under_the_title() -> None:
    rows = ["0 · <s> → lo", "1 · lo → a very long produced word"]
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]], x=["a", "b"], y=rows))
    fig.update_layout(title="cross-attention", yaxis_title="decoder position: input → produced")
    phone_layout(fig)
    cut = list(fig.layout.yaxis.ticktext)
    assert cut[1].endswith("…") and all(text_px(t, TICKS) <= LABEL_PX for t in cut)
    assert fig.layout.yaxis.title.text is None
    assert fig.layout.title.subtitle.text == "rows: decoder position: input → produced"


def test_cell_numbers_stay_only_where_the_cells_hold_them_and_text_is_a_phones_size() -> None:
    few = phone_layout(heads(numbers=True))
    assert few.data[0].texttemplate == "%{z:.2f}" and few.data[0].textfont.size < TICKS
    many = phone_layout(heads(columns=16, numbers=True))
    assert many.data[0].texttemplate is None  # 16 cells in ~240 px: no room for "0.50"
    assert few.layout.font.size <= 13 and few.layout.title.font.size == TITLE
    lines = few.layout.title.text.split("<br>")
    assert len(lines) > 1 and all(text_px(line, TITLE) <= PHONE_PX for line in lines)
