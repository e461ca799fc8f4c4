"""A slide's figures sized for where they are seen: a projector (the lecturer's page, and any
page in presentation mode) gets every text at the app's projector size, as every other page in
presentation mode does; a student's phone or laptop the figures' own screen sizes, a step up."""

from __future__ import annotations

import plotly.graph_objects as go

from attnlens.viz.lecture.phone_layout import phone_layout
from attnlens.viz.shared.labels import wrapped
from attnlens.viz.shared.style import PROJECTOR_FONT, projector

FIGURE_HEIGHT = 640  # px at most on a projector: a 1080-line screen keeps room for the title
# Figure 1 is taller: each of its blocks holds a line of projector text
# (viz/lecture/architecture.py); its title and subtitle take TITLE_ROOM px above it
STACKS_HEIGHT, TITLE_ROOM = 760, 110
SCREEN_FONT = 18  # a student's own screen: the figures' base text, a step up
SCREEN_TICKS = 15
SCREEN_LABELS = 16  # legends and axis titles
SCREEN_TITLE = 22  # px: a figure's title on a student's screen
SCREEN_TITLE_CHARS = 26  # a phone's figure, ~360 px wide, holds this much of it on a line
TITLE_LINE_PX, TITLE_PAD = 28, 10  # px a line of it takes, and above its first
PANEL_TITLE_ROOM = 40  # px under it for the panels' own titles
LEGEND_ROOM = 100  # px at the foot for the legend's rows (a phone wraps it in up to four)
TICK_ROOM = 100  # px above it for the x axis's labels and title (Plotly's automargin makes the
# margin as large as they need, never larger: the legend's room comes on top)
CLEAR = "rgba(0,0,0,0)"
NO_LEGEND = (
    "heatmap",
    "contour",
    "surface",
    "image",
    "table",
)  # not in a legend by default  # no background of its own: it sits on a light or a dark page alike


def projected(fig: go.Figure) -> go.Figure:
    """The figure, in place, for a projector: every text at least PROJECTOR_FONT px (ticks,
    titles and subtitles, legends, colour bars, text on the plot), no taller than
    FIGURE_HEIGHT."""
    projector(fig, PROJECTOR_FONT)
    fig.update_layout(
        height=min(fig.layout.height or FIGURE_HEIGHT, FIGURE_HEIGHT),
        paper_bgcolor=CLEAR,
        plot_bgcolor=CLEAR,
    )
    if (fig.layout.meta or {}).get("figure") == "stacks":
        fig.update_layout(height=STACKS_HEIGHT, margin_t=TITLE_ROOM)
    return fig


def screened(fig: go.Figure) -> go.Figure:
    """The figure, in place, for a student's own screen: text a step over the figures' own.
    The screen may be a phone's (~360 px for the figure): the title in lines of at most
    SCREEN_TITLE_CHARS, the legend in a row at the figure's foot (at the right, as on the
    projector, it took most of a phone's width and left the plots a sliver)."""
    fig.update_layout(
        font={"size": SCREEN_FONT},
        height=FIGURE_HEIGHT,
        paper_bgcolor=CLEAR,
        plot_bgcolor=CLEAR,
        legend_font_size=SCREEN_LABELS,  # set by the figures for a screen: 12 px
    )
    title = fig.layout.title.text
    if title and "<br>" not in title:
        lines = wrapped(title, SCREEN_TITLE_CHARS)
        if "<br>" in lines:  # from the figure's top, over the panels' titles. Plotly lifts a
            # title of several lines anchored there by about a line (its first was cut off;
            # anchored to the plot's top, the lines ran down over the panels): padded for it
            top = TITLE_PAD + TITLE_LINE_PX
            fig.layout.title.update(text=lines, font_size=SCREEN_TITLE, yref="container", y=1,
                                    yanchor="top", pad_t=top)  # fmt: skip
            room = top + (lines.count("<br>") + 1) * TITLE_LINE_PX + PANEL_TITLE_ROOM
            fig.layout.margin.t = max(fig.layout.margin.t or 0, room)
    if _has_legend(fig):
        fig.update_layout(
            legend={"orientation": "h", "x": 0, "xanchor": "left",
                    "yref": "container", "y": 0, "yanchor": "bottom"},
            margin_b=max(fig.layout.margin.b or 0, TICK_ROOM) + LEGEND_ROOM,
        )  # fmt: skip
    fig.update_xaxes(tickfont_size=SCREEN_TICKS, title_font_size=SCREEN_LABELS)
    fig.update_yaxes(tickfont_size=SCREEN_TICKS, title_font_size=SCREEN_LABELS)
    for note in fig.layout.annotations:  # subplot titles and labels: a size up, in proportion
        note.font.size = round((note.font.size or SCREEN_FONT - 2) * 1.25)
    return fig


def _has_legend(fig: go.Figure) -> bool:
    """Whether Plotly draws the figure's legend: two traces or more that show in it (a
    heatmap does not unless told), or a layout that asks for it."""
    if fig.layout.showlegend is not None:
        return bool(fig.layout.showlegend)
    shown = [
        t for t in fig.data if t.showlegend or (t.showlegend is None and t.type not in NO_LEGEND)
    ]
    return len(shown) >= 2


def phoned(fig: go.Figure) -> go.Figure:
    """The figure, in place, for a phone's screen (a student's page narrower than 640 px):
    its screen layout reflowed (viz/lecture/phone_layout.py)."""
    return phone_layout(fig)
