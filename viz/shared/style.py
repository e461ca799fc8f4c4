"""How a figure is dressed for where it is seen: every text projector-sized, or a theme's own
colours and margins for a file that leaves the app."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from attnlens.viz.shared.margins import AXIS_ROOM, BASE_FONT, balanced_lines, text_px
from attnlens.viz.shared.palette import BACKGROUNDS, TEMPLATES

PROJECTOR_FONT = 24  # px: every text of a figure on a projector, ticks included
TITLE_EXTRA = 6  # figure titles this much larger
PROJECTOR_HEIGHT = (520, 680)  # px, at least and at most: a figure and the page title fit 1080
HEIGHT_GROWTH = 1.3  # larger text needs a taller figure
TICK_PX = 1.6  # px between labelled ticks per px of font
BAR_TICK_GAP = 1.5  # px between a vertical colour bar's labelled ticks per px of font (a line box)
PANEL_TITLE_PX = 30  # px a panel title takes at BASE_FONT (make_subplots draws them at 16 px)
TEXT_PROPERTIES = ("textfont", "insidetextfont", "outsidetextfont")
EXPORT_WIDTH = 1100  # px of a PNG or SVG when the figure sets no width of its own


def projector(fig: go.Figure, size: int = PROJECTOR_FONT) -> go.Figure:
    """The figure, changed in place, with every text at least `size` px: ticks, axis and
    panel titles, legend, colour bars, hover labels and text drawn on the plot; the title
    larger; the figure taller (never shorter), and where its margins grew with the text, tall
    enough (up to the cap) to keep the plot as tall as it was; category ticks thinned so the
    larger labels do not collide."""
    big = {"size": size}
    fig.update_layout(
        font=big,
        title_font={"size": size + TITLE_EXTRA},
        legend={"font": big, "title": {"font": big}},
        hoverlabel={"font": big},
    )
    own = fig.layout.height or 450  # grown up to the cap; one already taller keeps its height
    height = max(min(PROJECTOR_HEIGHT[1], round(own * HEIGHT_GROWTH)), PROJECTOR_HEIGHT[0], own)
    margin = fig.layout.margin  # margins and paddings set for BASE_FONT text grow with it
    plot = None if margin.t is None or margin.b is None else own - margin.t - margin.b
    _grown_margins(margin, size)
    if plot is not None:  # a grid's, estimated from its labels: the plot keeps its height
        height = max(height, min(PROJECTOR_HEIGHT[1], margin.t + margin.b + plot))
    fig.update_layout(height=height)
    if fig.layout.title.subtitle.text:
        fig.layout.title.subtitle.font.size = size
    if fig.layout.title.pad.b:
        fig.layout.title.pad.b = round(fig.layout.title.pad.b * size / BASE_FONT)
    for annotation in fig.layout.annotations:  # subplot titles, grid labels
        annotation.font.size = max(size, annotation.font.size or 0)
    for name in [k for k in fig.layout if k.startswith("coloraxis")]:
        _colorbar(fig.layout[name].colorbar, size)
    fig.for_each_xaxis(lambda axis: _axis(axis, size, None))
    fig.for_each_yaxis(lambda axis: _axis(axis, size, _axis_px(axis, height, margin)))
    fig.for_each_trace(lambda trace: _trace(trace, size))
    plot_px = height - (margin.t or 100) - (margin.b or 80)  # a bar's length: the plot's height
    for bar in _bars(fig):
        thin_bar_ticks(bar, float(plot_px), size)  # 0 / 0.001 / 0.01 fell on one another
    return fig


def thin_bar_ticks(bar: Any, length_px: float, font: float, horizontal: bool = False) -> None:
    """A colour bar's labelled ticks, those that collide dropped (its ends kept): vertical
    ticks a line apart, horizontal ones a label's width apart (0 / 0.001 / 0.01 of the
    perceptual scale fell on one another, issue 49)."""
    values, texts = bar.tickvals, bar.ticktext
    if values is None or texts is None or len(values) < 3:
        return
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    kept = [0]
    for i in range(1, len(values)):
        gap = (values[i] - values[kept[-1]]) / span * length_px
        need = (text_px(str(texts[i]), font) + text_px(str(texts[kept[-1]]), font)) / 2 + 1.5 * font
        if gap >= (need if horizontal else font * BAR_TICK_GAP):
            kept.append(i)
    if kept[-1] != len(values) - 1:  # the top end always, in place of the last kept
        kept[-1] = len(values) - 1
    bar.update(tickvals=[values[i] for i in kept], ticktext=[texts[i] for i in kept])


def _bars(fig: go.Figure) -> list[Any]:
    """The colour bars the figure draws (its traces' own and its colour axes')."""
    out = [fig.layout[k].colorbar for k in fig.layout if k.startswith("coloraxis")]
    return out + [
        t.colorbar for t in fig.data
        if "colorbar" in t and t.showscale is not False and not t.coloraxis
        and t.colorbar.tickvals is not None
    ]  # fmt: skip


def _grown_margins(margin: Any, size: int) -> None:
    """Margins set for BASE_FONT text grown for `size`: the room under a grid for its turned
    key labels and axis title (margins.grid_margins: the labels' width and AXIS_ROOM) grows by
    its labels' share; a title's room by the title's size; any other side in proportion.
    (Every side doubled left Explore's projected heatmap a plot 260 px tall in a 680 px
    figure.)"""
    scale = size / BASE_FONT
    if margin.b is not None and margin.b >= AXIS_ROOM:  # below a grid: its keys, turned
        margin.b = round((margin.b - AXIS_ROOM) * scale + AXIS_ROOM + size / 2)
    elif margin.b is not None:
        margin.b = round(margin.b * scale)
    if margin.t is not None:
        margin.t = round(margin.t * (size + TITLE_EXTRA) / (BASE_FONT + 4))
    for side in ("l", "r"):  # beside a grid its queries stand upright: their full width
        if margin[side] is not None:
            margin[side] = round(margin[side] * scale)


def _axis(axis: Any, size: int, length_px: float | None) -> None:
    """Ticks and title at `size`; on a y axis of positions, a title longer than the axis in
    two lines (one would run past the plot into the figure's title), and ticks thinned."""
    axis.update(tickfont={"size": size}, title_font={"size": size}, automargin=True)
    if length_px is None:
        return
    title = axis.title.text
    if title and text_px(title, size) > length_px:
        axis.title.text = balanced_lines(title)
    values, texts = axis.tickvals, axis.ticktext
    if values is None or texts is None:
        return
    room = max(1, int(length_px // (TICK_PX * size)))
    step = math.ceil(len(values) / room)
    if step > 1:
        axis.update(tickvals=list(values)[::step], ticktext=list(texts)[::step])


def _axis_px(axis: Any, height: int, margin: Any) -> float | None:
    """A rough length of a y axis in pixels (its share of the figure less its top and bottom
    margins, ~200 px where they are not set); None for axes whose labels are not positions."""
    if axis.type != "category":
        return None
    low, high = axis.domain or (0.0, 1.0)
    room = height - 200.0
    if margin.t is not None and margin.b is not None:
        room = float(height - margin.t - margin.b)
    return max(100.0, room * (high - low))


def _colorbar(bar: Any, size: int) -> None:
    bar.update(tickfont={"size": size}, title={"font": {"size": size}})


def _trace(trace: Any, size: int) -> None:
    """Text drawn on the plot and a trace's own colour bar (touched only where one is drawn:
    setting any part of a colour bar makes Plotly draw it)."""
    if "colorbar" in trace and trace.showscale is not False and not trace.coloraxis:
        _colorbar(trace.colorbar, size)
    for prop in TEXT_PROPERTIES:
        if prop in trace:
            trace[prop].size = size


def panel_title(text: str) -> dict[str, Any]:
    """Layout for a figure title above subplot panels: just above the plot area, lifted over
    the panels' own titles, the top margin growing to hold it. (A title anchored to the top
    of the figure loses its first line when it has two.)"""
    return {
        "title": {"text": text, "yref": "paper", "y": 1, "yanchor": "bottom",
                  "pad": {"b": PANEL_TITLE_PX}, "automargin": True},
        "margin": {"t": 10},
    }  # fmt: skip


def exported(fig: go.Figure, dark: bool = False) -> go.Figure:
    """A copy of the figure for a file: the light or dark theme's own template (its colours,
    and margins that grow to fit every label), opaque backgrounds, whatever template the
    process holds as default (Streamlit's placeholder colours and fixed margins included)."""
    out = go.Figure(fig)
    out.update_layout(template=TEMPLATES[dark])
    background = BACKGROUNDS[dark]
    out.update_layout(paper_bgcolor=background, plot_bgcolor=background)
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    return out


def image_size(fig: go.Figure) -> dict[str, int]:
    """Width and height of a PNG or SVG of the figure: its own, else EXPORT_WIDTH × its
    height (or 500)."""
    return {"width": fig.layout.width or EXPORT_WIDTH, "height": fig.layout.height or 500}
