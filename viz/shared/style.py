"""How a figure is dressed for where it is seen: every text projector-sized, or a theme's own
colours and margins for a file that leaves the app."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from attnlens.viz.shared.margins import BASE_FONT, balanced_lines, text_px

PROJECTOR_FONT = 24  # px: every text of a figure on a projector, ticks included
TITLE_EXTRA = 6  # figure titles this much larger
PROJECTOR_HEIGHT = (520, 680)  # px, at least and at most: a figure and the page title fit 1080
HEIGHT_GROWTH = 1.3  # larger text needs a taller figure
TICK_PX = 1.6  # px between labelled ticks per px of font
PANEL_TITLE_PX = 30  # px a panel title takes at BASE_FONT (make_subplots draws them at 16 px)
TEXT_PROPERTIES = ("textfont", "insidetextfont", "outsidetextfont")
EXPORT_TEMPLATES = {False: "plotly_white", True: "plotly_dark"}
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
    if margin.t is not None and margin.b is not None:  # a grid's, estimated from its labels:
        plot = own - margin.t - margin.b  # doubled, they left a 7-row heatmap 138 of 546 px
        grown = round((margin.t + margin.b) * size / BASE_FONT) + plot
        height = max(height, min(PROJECTOR_HEIGHT[1], grown))
    fig.update_layout(height=height)
    for side in ("l", "r", "t", "b"):
        if margin[side] is not None:
            margin[side] = round(margin[side] * size / BASE_FONT)
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
    return fig


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
    template = EXPORT_TEMPLATES[dark]
    out.update_layout(template=template)
    background = "rgb(17,17,17)" if dark else "white"
    out.update_layout(paper_bgcolor=background, plot_bgcolor=background)
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    return out


def image_size(fig: go.Figure) -> dict[str, int]:
    """Width and height of a PNG or SVG of the figure: its own, else EXPORT_WIDTH × its
    height (or 500)."""
    return {"width": fig.layout.width or EXPORT_WIDTH, "height": fig.layout.height or 500}
