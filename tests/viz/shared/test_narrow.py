"""Figures reflowed for a phone (viz/shared/narrow.py, issue 49), checked by their layout: panels
side by side come out stacked, each the full width with its title over it; a colour bar lies
under its own panel; category labels are all there when they fit and evenly thinned when not, a
long row label cut; cell numbers leave cells too narrow for them; text is a phone's size, a
projector's brought down; a legend goes to the foot; Figure 1's diagram keeps its layout, its
words scaled. The browser's view of the same is tests/app/web/browser/test_browser_phone.py and
tests/app/classroom/test_browser_class_teacher.py (a student's slide)."""

from __future__ import annotations

import itertools

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens import viz
from attnlens.record.trace import ModelInfo
from attnlens.viz.lecture.architecture import architecture_diagram
from attnlens.viz.shared.margins import text_px
from attnlens.viz.shared.narrow import (
    DIAGRAM_FONT,
    DIAGRAM_PX,
    FONT,
    LABEL_PX,
    PHONE_PX,
    TICKS,
    TITLE,
    narrowed,
    panels_of,
)
from attnlens.viz.shared.style import PROJECTOR_FONT, projector

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


def test_panels_side_by_side_are_stacked_each_the_full_width_under_its_title() -> None:
    fig = narrowed(heads())
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


def test_a_real_figures_three_panels_are_stacked_in_order(synth: type) -> None:
    tr = synth.make_trace(src=list("abcdefgh"), tgt=["<s>", *"abcdefgh"])
    fig = viz.masks_view(tr, "decoder_self")  # padding, causal, applied: three in a row
    before = fig.layout.height or 450
    assert len({p.xdom for p in panels_of(fig)}) == 3
    narrowed(fig)
    panels = panels_of(fig)
    assert len(panels) == 3 and all(p.xdom == (0.0, 1.0) for p in panels)
    assert all(a.ydom[0] > b.ydom[1] for a, b in itertools.pairwise(panels))
    assert fig.layout.height > before


def test_the_colour_bar_lies_under_its_own_panel_no_wider_than_the_plot() -> None:
    fig = narrowed(heads())
    bar = fig.data[3].colorbar
    assert bar.orientation == "h" and bar.len <= 1 and bar.lenmode in (None, "fraction")
    assert bar.y < fig.layout.yaxis4.domain[0]  # under the last panel (head 3's)


def test_a_heatmaps_colour_bar_lies_under_it_and_its_rows_are_named_above(synth: type) -> None:
    tr = synth.make_trace(src=[f"token{i}" for i in range(12)], tgt=["<s>", "x", "y"])
    fig = narrowed(viz.head_heatmap(tr, "encoder_self", 0, 0))
    bar = fig.data[0].colorbar
    assert bar.orientation == "h" and bar.y < 0 and bar.yanchor == "top"
    labels = fig.layout.yaxis.ticktext
    assert labels and all(text_px(t, TICKS) <= LABEL_PX for t in labels)
    assert fig.layout.yaxis.title.text is None  # moved under the title: "rows: query"
    assert "rows: query" in fig.layout.title.subtitle.text


def test_labels_are_all_shown_when_they_fit_and_thinned_evenly_when_not() -> None:
    fig = narrowed(heads())
    assert list(fig.layout.xaxis.tickvals) == [f"{i} · k{i}" for i in range(6)]  # every key
    assert list(fig.layout.yaxis.ticktext) == TOKENS
    many = narrowed(heads(columns=40))
    shown = list(many.layout.xaxis.tickvals)
    assert 5 <= len(shown) < 40 and shown[0] == "0 · k0"
    step = int(shown[1].split(" ")[0])
    assert all(int(v.split(" ")[0]) == i * step for i, v in enumerate(shown))  # evenly


def test_a_long_row_label_is_cut_and_the_rows_title_goes_under_the_title() -> None:
    rows = ["<s> → lo", "lo → a very long produced word", "a long input word → dom"]
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, 4], [5, 6]], x=["a", "b"], y=rows))
    fig.update_layout(title="cross-attention", yaxis_title="decoder position: input → produced")
    narrowed(fig)
    cut = list(fig.layout.yaxis.ticktext)
    assert cut[0] == rows[0] and cut[1].endswith("…")
    assert cut[2].endswith("… → dom")  # the input cut, not the word the row produced
    assert all(text_px(t, TICKS) <= LABEL_PX for t in cut)
    assert fig.layout.yaxis.title.text is None
    assert fig.layout.title.subtitle.text == "rows: decoder position: input → produced"


def test_cell_numbers_stay_only_where_the_cells_hold_them_and_text_is_a_phones_size() -> None:
    few = narrowed(heads(numbers=True))
    assert few.data[0].texttemplate == "%{z:.2f}" and few.data[0].textfont.size < TICKS
    many = narrowed(heads(columns=16, numbers=True))
    assert many.data[0].texttemplate is None  # 16 cells in ~240 px: no room for "0.50"
    assert few.layout.font.size <= FONT and few.layout.title.font.size == TITLE
    lines = few.layout.title.text.split("<br>")
    assert len(lines) > 1 and all(text_px(line, TITLE) <= PHONE_PX for line in lines)


def test_a_title_never_breaks_before_a_number_or_a_separator() -> None:
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]]))
    fig.update_layout(title="decoder self-attention · layer 2 · head 0")  # Explore's, at 390 px
    lines = narrowed(fig).layout.title.text.split("<br>")
    assert lines == ["decoder self-attention ·", "layer 2 · head 0"]


def test_a_projectors_text_comes_down_and_narrow_cells_drop_their_numbers(synth: type) -> None:
    tr = synth.make_trace(src=[f"w{i}" for i in range(30)], tgt=["<s>", "x"])
    fig = viz.head_heatmap(tr, "encoder_self", 0, 0)
    fig.data[0].update(texttemplate="%{z:.2f}")  # numbers in 30 cells a row
    projector(fig, PROJECTOR_FONT)
    narrowed(fig)
    assert fig.layout.font.size == FONT
    assert fig.layout.xaxis.tickfont.size <= TICKS and fig.data[0].colorbar.tickfont.size <= TICKS
    assert fig.data[0].texttemplate is None  # 30 cells in ~230 px: too narrow for them


def test_a_legend_at_the_right_goes_to_the_foot_in_rows() -> None:
    fig = go.Figure([go.Scatter(y=[1, 2], name="with √d_k"), go.Scatter(y=[2, 1], name="without")])
    fig.update_layout(title="softmax of scaled scores", height=400, margin_b=60)
    narrowed(fig)
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.yref == "container" and legend.y == 0
    assert fig.layout.margin.b > 60  # room for its rows under the x labels


def test_figure_1_keeps_its_layout_and_its_words_shrink_in_proportion() -> None:
    fig = architecture_diagram(ModelInfo("translate", "encoder-decoder", 2, 4, 64), "cat", "gat")
    fig.update_layout(meta={"figure": "stacks"})  # as a slide's build names it
    projector(fig, PROJECTOR_FONT)
    for i, note in enumerate(fig.layout.annotations):  # two sizes, as a student's screen has
        note.font.size = 20 if i % 2 else 16
    before = [(n.x, n.y, n.xref, n.text) for n in fig.layout.annotations]
    narrowed(fig)
    notes = fig.layout.annotations
    assert [(n.x, n.y, n.xref, n.text) for n in notes] == before  # laid out as it was
    sizes = [n.font.size for n in notes]
    assert max(sizes) == round(PROJECTOR_FONT * PHONE_PX / DIAGRAM_PX)  # a projector's, scaled
    assert min(sizes) >= DIAGRAM_FONT
    assert all(sizes[i] > sizes[i - 1] for i in range(1, len(sizes), 2))  # 20 stays over 16


def test_a_title_hung_from_the_top_is_wrapped_again_for_the_phones_width() -> None:
    """A student's screen wraps a slide's title at 26 characters (slide_sizes.screened); a
    phone's figure holds more, and its lines had "= 16" start one."""
    fig = go.Figure(go.Heatmap(z=[[1]]))
    said = "§3.2.1 on this input: d_k<br>= 16, each row of K is a<br>key"
    fig.update_layout(title={"text": said, "yref": "container"})
    lines = narrowed(fig).layout.title.text.split("<br>")
    assert lines == ["§3.2.1 on this input: d_k = 16,", "each row of K is a key"]


def test_a_title_wrapped_for_a_phone_grows_the_figure_not_into_the_plot(synth: type) -> None:
    """Explore's cross heatmap of 7 rows on a phone: the title's lines and "rows: …" under it
    took their room from the plot, squeezed to 100 px, its circles over one another."""
    tr = synth.make_trace(src=list("abcdef"), tgt=["<s>", *"abcdef"])
    fig = viz.head_heatmap(tr, "cross", 0, 0)

    def plot_px() -> float:
        return float(fig.layout.height - fig.layout.margin.t - fig.layout.margin.b)

    before = plot_px()
    narrowed(fig)
    assert fig.layout.title.text.count("<br>") >= 1  # wrapped
    assert plot_px() >= before - 1, (before, plot_px())


def test_a_cut_label_keeps_the_mark_of_the_right_answer() -> None:
    """The class's answers on a phone: "D · 3 · a house ✓" was cut to "D · 3 · a…", the ✓ that
    says which is right gone."""
    from attnlens.viz.lecture.reveal import class_answers

    fig = narrowed(
        class_answers(["0 · the", "1 · cat", "2 · sees", "3 · a house"], [0, 1, 0, 0], 3)
    )
    shown = list(fig.layout.yaxis.ticktext)
    assert shown[3].endswith("… ✓") and shown[3].startswith("D · "), shown
    assert not any(t.endswith("✓") for t in shown[:3])
