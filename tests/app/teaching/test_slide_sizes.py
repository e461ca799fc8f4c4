"""The lecture's figures sized for a projector (every text 24 px, as every page in presentation
mode) and for a student's own screen."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlens.app.teaching.slide_sizes import (
    FIGURE_HEIGHT,
    LEGEND_ROOM,
    PANEL_TITLE_ROOM,
    SCREEN_TICKS,
    SCREEN_TITLE_CHARS,
    STACKS_HEIGHT,
    TICK_ROOM,
    TITLE_LINE_PX,
    projected,
    screened,
)
from attnlens.record.trace import ModelInfo
from attnlens.viz.lecture.architecture import architecture_diagram
from attnlens.viz.lecture.heads_row import heads_row
from attnlens.viz.lecture.saturation import saturation_view
from attnlens.viz.shared.style import PROJECTOR_FONT
from helpers import synth

ENC_DEC = ModelInfo("translate", "encoder-decoder", 2, 4, 64)


def test_figure_1_blocks_hold_their_words_at_the_projector_size() -> None:
    """On a projector (every text 24 px, the lecture's Figure 1 760 px tall) each block is at
    least as tall as its lines of text: at 14 px blocks of 0.7 units held 23 px."""
    fig = architecture_diagram(ENC_DEC, "the cat", "<s> le chat")
    fig = projected(fig.update_layout(meta={"figure": "stacks"}))  # as the lecture shows it
    low, high = fig.layout.yaxis.range
    margin = fig.layout.margin
    px_per_unit = (fig.layout.height - margin.t - margin.b) / (high - low)
    for shape in fig.layout.shapes:
        if shape.type != "rect":
            continue
        inside = [a for a in fig.layout.annotations if not a.showarrow and a.text
                  and shape.x0 < a.x < shape.x1 and shape.y0 < a.y < shape.y1
                  and a.xanchor != "left"]  # fmt: skip
        for note in inside:
            lines = note.text.count("<br>") + 1
            assert note.font.size >= PROJECTOR_FONT
            need = lines * note.font.size * 1.15
            assert (shape.y1 - shape.y0) * px_per_unit >= need, (note.text, px_per_unit)


def test_a_projected_figure_fits_the_screen_and_a_screen_one_keeps_its_size() -> None:
    heads = heads_row(synth.make_trace(L=1, H=4), "encoder_self", 0)
    big = projected(go.Figure(heads))
    assert big.layout.height <= FIGURE_HEIGHT and big.layout.font.size == PROJECTOR_FONT
    assert all(axis.tickfont.size == PROJECTOR_FONT for axis in big.select_yaxes())
    assert all(a.font.size >= PROJECTOR_FONT for a in big.layout.annotations)  # "head 0", …
    small = screened(go.Figure(heads))
    assert all(axis.tickfont.size == SCREEN_TICKS for axis in small.select_xaxes())
    stacks = architecture_diagram(ENC_DEC).update_layout(meta={"figure": "stacks"})
    assert projected(stacks).layout.height == STACKS_HEIGHT


def _scaling() -> go.Figure:
    rng = np.random.default_rng(0)
    return saturation_view(rng.normal(size=(3, 16)), rng.normal(size=(4, 16)), 1, "b", list("wxyz"))


def test_a_student_s_phone_gets_the_legend_at_the_foot_and_the_title_in_lines() -> None:
    """On a phone (390 px) the √d_k slide's legend at the right took most of the width and left
    each plot a sliver, and a title in one line ran off both edges; on a student's screen the
    legend is a row at the figure's foot, under the x axis's room, and the title wraps."""
    phone = screened(_scaling())
    legend = phone.layout.legend
    assert (legend.orientation, legend.yref, legend.y, legend.yanchor) == (
        "h",
        "container",
        0,
        "bottom",
    )
    assert phone.layout.margin.b >= TICK_ROOM + LEGEND_ROOM
    heads = screened(heads_row(synth.make_trace(L=1, H=4), "encoder_self", 0))
    lines = heads.layout.title.text.split("<br>")
    assert len(lines) > 1 and all(len(line) <= SCREEN_TITLE_CHARS for line in lines), lines
    title = heads.layout.title  # from the top, lines and the panels' titles under it in the margin
    assert (title.yref, title.y, title.yanchor) == ("container", 1, "top")
    assert heads.layout.margin.t >= title.pad.t + len(lines) * TITLE_LINE_PX + PANEL_TITLE_ROOM
    assert heads.layout.legend.orientation is None  # heatmaps have no legend to move
    big = projected(_scaling())  # the projector keeps its legend at the right, title whole
    assert big.layout.legend.x == 1.02 and big.layout.legend.orientation is None
    assert "<br>" not in (
        projected(heads_row(synth.make_trace(L=1, H=4), "encoder_self", 0)).layout.title.text
    )


def test_the_heads_slide_fits_its_column_at_1400_px() -> None:
    """Slide 6 on lm at 1,400 px: the title ran past the 840 px plot ("… through ea") and each
    panel's last slanted key label ran under the next panel's first."""
    fig = projected(heads_row(synth.make_trace(L=1, H=4), "encoder_self", 0))
    title = fig.layout.title.text
    assert len(title) * 0.55 * PROJECTOR_FONT <= 840, title  # ~0.55 em a character, bold
    assert all(axis.tickangle == -90 for axis in fig.select_xaxes())


def test_the_class_histogram_names_every_option_on_a_projector() -> None:
    """The teacher's histogram (300 px in the words' column) kept ~50 px for its bars once its
    margins grew with the projector's text, and Plotly dropped every other option's name."""
    from attnlens.app.web.lecture.ask import HISTOGRAM_HEIGHT
    from attnlens.viz.lecture.reveal import class_answers

    options = ["2 · sees", "3 · a", "4 · house", "5 · </s>"]
    fig = projected(class_answers(options, [0, 3, 1, 0], 3))
    fig.update_layout(height=HISTOGRAM_HEIGHT)  # as the lecture page shows it
    x_axis = 2 * 1.5 * PROJECTOR_FONT  # the count's ticks and the axis title under the bars
    plot = HISTOGRAM_HEIGHT - fig.layout.margin.t - fig.layout.margin.b - x_axis
    assert plot >= len(options) * 1.2 * PROJECTOR_FONT, plot
