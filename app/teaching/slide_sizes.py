"""A slide's figures sized for where they are seen: a projector (the lecturer's page, and any
page in presentation mode) gets every text at the app's projector size, as every other page in
presentation mode does; a student's phone or laptop the figures' own screen sizes, a step up."""

from __future__ import annotations

import plotly.graph_objects as go

from attnlens.viz.style import PROJECTOR_FONT, projector

FIGURE_HEIGHT = 640  # px at most on a projector: a 1080-line screen keeps room for the title
# Figure 1 is taller: each of its blocks holds a line of projector text (viz/architecture.py);
# its title and subtitle take TITLE_ROOM px above it
STACKS_HEIGHT, TITLE_ROOM = 760, 110
SCREEN_FONT = 18  # a student's own screen: the figures' base text, a step up
SCREEN_TICKS = 15
SCREEN_LABELS = 16  # legends and axis titles
CLEAR = "rgba(0,0,0,0)"  # no background of its own: it sits on a light or a dark page alike


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
    """The figure, in place, for a student's own screen: text a step over the figures' own."""
    fig.update_layout(
        font={"size": SCREEN_FONT},
        height=FIGURE_HEIGHT,
        paper_bgcolor=CLEAR,
        plot_bgcolor=CLEAR,
        legend_font_size=SCREEN_LABELS,  # set by the figures for a screen: 12 px
    )
    fig.update_xaxes(tickfont_size=SCREEN_TICKS, title_font_size=SCREEN_LABELS)
    fig.update_yaxes(tickfont_size=SCREEN_TICKS, title_font_size=SCREEN_LABELS)
    for note in fig.layout.annotations:  # subplot titles and labels: a size up, in proportion
        note.font.size = round((note.font.size or SCREEN_FONT - 2) * 1.25)
    return fig
