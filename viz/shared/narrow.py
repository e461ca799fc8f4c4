"""A figure laid out again for a phone: reflowed, not squeezed.

A figure made for a laptop keeps its layout in a 340 px column: panels side by side a sliver
each with their titles printed over one another, a colour bar wider than the plot beside it,
long token labels taking most of the width, numbers in cells too small to hold them (issue 49:
Explore's heatmap a 90 px strip at 390 px; the lecture's slides). Here, in place:

- panels side by side are stacked, each the full width at its own height, its title above it
  and its x labels below it;
- every colour bar lies under its plot, horizontal, its ticks thinned so that none collide;
- titles are wrapped to the width; tick labels are cut to what fits beside the plot, and
  thinned so that they stand apart;
- numbers written in cells narrower than they are go (the hover still gives them).

The figure's width stays the page's (Plotly stretches it); `width` is what the layout is
planned for.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from attnlens.viz.shared.labels import wrapped
from attnlens.viz.shared.margins import BASE_FONT, text_px, widest_px
from attnlens.viz.shared.style import thin_bar_ticks

NARROW_PX = 640  # a screen narrower than this is a phone's (Streamlit stacks columns there too)
PHONE_PX = 330  # the figure's width planned for: a 360–390 px screen less the page's padding
PLOT_PX = 250  # and its plot's, the labels beside it
NUMBERED = re.compile(r"^\d+ · ")  # a position's label: "12 · e → H"
PHONE_FONT = 13  # px: a phone's figure text at most (its titles a little larger)
DIAGRAM_PX, DIAGRAM_FONT = 830, 8  # Figure 1's width at projector text; its smallest text
LABEL_SHARE = 0.13  # of the width, at most, for a y axis's tick labels
TITLE_GAP, BAR_ROOM, PANEL_MIN, PANEL_MAX = 44, 84, 150, 300  # px
BAR_TITLE_PX = 24  # a horizontal colour bar's title, above its bar
CELL_TEXT_PX = 26  # a cell narrower than this drops the number written in it
TICK_GAP = 1.3  # px between two ticks' labels per px of font, at least


@dataclass
class Panel:
    """One plot of the figure: its axes' names and their domains on the paper."""

    x: str  # "xaxis", "xaxis2", …
    y: str
    xdom: tuple[float, float]
    ydom: tuple[float, float]


def narrowed(fig: go.Figure, width: int = PHONE_PX) -> go.Figure:
    """The figure, changed in place, for a screen `width` px wide (see the module's text)."""
    _smaller_text(fig, PHONE_FONT)
    font = float(fig.layout.font.size or BASE_FONT)
    if (fig.layout.meta or {}).get("figure") == "stacks":
        _diagram_text(fig, width)
        _wrap_titles(fig, width, font)
        return fig
    panels = panels_of(fig)
    stacked = len({p.xdom for p in panels}) > 1
    plot_h = _plot_height(fig)
    if stacked:
        _stack(fig, panels, plot_h, font)
    else:
        _bars_below(fig, panels, font)
    if not stacked and panels:
        _row_title_up(fig, panels[0])
    _wrap_titles(fig, width, font)
    for panel in panels:
        _short_ticks(fig, panel, width, font)
        _cell_text(fig, panel, width)
    fig.update_layout(margin={"r": 6})
    if fig.layout.legend.orientation != "h" and any(t.showlegend is not False for t in fig.data):
        fig.update_layout(legend={"orientation": "h", "yref": "container", "y": 0,
                                  "yanchor": "bottom", "x": 0, "xanchor": "left"})  # fmt: skip
    return fig


def _smaller_text(fig: go.Figure, size: int) -> None:
    """Every text at most `size` px (titles a little larger): a slide's figure comes to a
    phone at a projector's 24 px, which left two letters of a token beside a plot."""

    def cap(font: Any, most: int = size) -> None:
        if font is not None and font.size is not None and font.size > most:
            font.size = most

    layout = fig.layout
    if layout.font.size is None or layout.font.size > size:
        layout.font.size = size
    cap(layout.title.font, size + 4)
    cap(layout.title.subtitle.font)
    cap(layout.legend.font)
    cap(layout.hoverlabel.font)
    for note in layout.annotations:
        cap(note.font, size + 2)
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        cap(axis.tickfont)
        cap(axis.title.font)
    for name in [k for k in layout if k.startswith("coloraxis")]:
        cap(layout[name].colorbar.tickfont)
        cap(layout[name].colorbar.title.font)
    for trace in fig.data:
        for prop in ("textfont", "insidetextfont", "outsidetextfont"):
            if prop in trace:
                cap(trace[prop])
        if "colorbar" in trace and trace.showscale is not False and not trace.coloraxis:
            cap(trace.colorbar.tickfont)
            cap(trace.colorbar.title.font)


def _diagram_text(fig: go.Figure, width: int) -> None:
    """A diagram drawn in its own units (Figure 1's stacks, viz/lecture/architecture.py)
    shrinks with the page: its words shrink with it, from a projector's 24 px in the DIAGRAM_PX
    it was laid out for, never under DIAGRAM_FONT px."""
    size = max(DIAGRAM_FONT, round(24 * width / DIAGRAM_PX))
    for note in fig.layout.annotations:
        note.font.size = size
    fig.update_layout(margin={"l": 4, "r": 4})


def panels_of(fig: go.Figure) -> list[Panel]:
    """Every pair of axes some trace is drawn on, top row first, left to right."""
    seen: dict[tuple[str, str], Panel] = {}
    for trace in fig.data:
        if "xaxis" not in trace or "yaxis" not in trace:
            continue
        x, y = _axis_name(trace.xaxis, "x"), _axis_name(trace.yaxis, "y")
        if (x, y) not in seen:
            xdom = tuple(fig.layout[x].domain or (0.0, 1.0))
            ydom = tuple(fig.layout[y].domain or (0.0, 1.0))
            seen[(x, y)] = Panel(x, y, xdom, ydom)  # type: ignore[arg-type]
    return sorted(seen.values(), key=lambda p: (-p.ydom[1], p.xdom[0]))


def _axis_name(ref: str | None, letter: str) -> str:
    return f"{letter}axis" + (ref or letter)[1:]


def _plot_height(fig: go.Figure) -> float:
    height = fig.layout.height or 450
    margin = fig.layout.margin
    return float(height - (margin.t if margin.t is not None else 100)
                 - (margin.b if margin.b is not None else 80))  # fmt: skip


def _labels_px(fig: go.Figure, axis: str, font: float) -> float:
    """Room under a plot for its x axis's tick labels (Plotly turns long ones upright) and
    its title."""
    labels = [str(t) for t in (fig.layout[axis].ticktext or _categories(fig, axis) or ["000"])]
    turned = widest_px(labels, font) > 3 * font
    room = min(widest_px(labels, font), 110.0) if turned else font * 1.6
    return room + (font * 2 if fig.layout[axis].title.text else 0) + 8


def _stack(fig: go.Figure, panels: list[Panel], plot_h: float, font: float) -> None:
    """Each panel the full width, one under another, its title's room above it and its
    labels' (and colour bar's) below it; the figure as tall as they need."""
    titles = _panel_titles(fig, panels)
    bars = _bar_owners(fig)
    heights = [min(PANEL_MAX, max(PANEL_MIN, (p.ydom[1] - p.ydom[0]) * plot_h)) for p in panels]
    below = [_labels_px(fig, p.x, font) + (BAR_ROOM if (p.x, p.y) in bars else 0) for p in panels]
    total = sum(heights) + sum(below) + TITLE_GAP * len(panels)
    margin = fig.layout.margin
    top = margin.t if margin.t is not None else 100
    bottom = margin.b if margin.b is not None else 40
    fig.update_layout(height=round(total + top + bottom))
    at = total  # px from the plot area's bottom to the next panel's top
    for panel, h, room in zip(panels, heights, below, strict=True):
        at -= TITLE_GAP
        ydom = ((at - h) / total, at / total)
        fig.layout[panel.y].domain = ydom
        fig.layout[panel.x].domain = (0.0, 1.0)
        fig.layout[panel.x].showticklabels = True
        fig.layout[panel.y].showticklabels = True
        for note in titles.get((panel.x, panel.y), []):
            note.update(x=0.5, y=ydom[1], xanchor="center", yanchor="bottom")
        for bar in bars.get((panel.x, panel.y), []):
            labels = room - BAR_ROOM  # the bar's room under the labels' own
            _horizontal(bar, (at - h - labels - BAR_TITLE_PX) / total, font)
        at -= h + room


def _panel_titles(fig: go.Figure, panels: list[Panel]) -> dict[tuple[str, str], list[Any]]:
    """The annotations that title a panel (make_subplots puts them at the middle of its top)."""
    out: dict[tuple[str, str], list[Any]] = {}
    for note in fig.layout.annotations:
        if note.xref != "paper" or note.yref != "paper" or note.x is None or note.y is None:
            continue
        for p in panels:
            middle = (p.xdom[0] + p.xdom[1]) / 2
            if abs(note.x - middle) < 1e-6 and abs(note.y - p.ydom[1]) < 1e-6:
                out.setdefault((p.x, p.y), []).append(note)
    return out


def _bar_owners(fig: go.Figure) -> dict[tuple[str, str], list[Any]]:
    """The colour bars drawn, each with the panel of the trace it belongs to."""
    out: dict[tuple[str, str], list[Any]] = {}
    done: set[str] = set()
    for trace in fig.data:
        where = (_axis_name(trace.xaxis, "x"), _axis_name(trace.yaxis, "y"))
        if getattr(trace, "coloraxis", None):
            if trace.coloraxis in done or fig.layout[trace.coloraxis].showscale is False:
                continue
            done.add(trace.coloraxis)
            out.setdefault(where, []).append(fig.layout[trace.coloraxis].colorbar)
        elif (
            "colorbar" in trace
            and trace.showscale is not False
            and trace.type in ("heatmap", "contour", "histogram2d")
        ):
            out.setdefault(where, []).append(trace.colorbar)
    return out


def _bars_below(fig: go.Figure, panels: list[Panel], font: float) -> None:
    """One plot: its colour bar under its x labels, the bottom margin grown to hold it."""
    bars = [b for owned in _bar_owners(fig).values() for b in owned]
    if not bars or not panels:
        return
    room = _labels_px(fig, panels[0].x, font)
    plot_h = _plot_height(fig) or 300.0
    margin = fig.layout.margin
    fig.layout.margin.b = round((margin.b if margin.b is not None else 80) + BAR_ROOM)
    fig.update_layout(height=round((fig.layout.height or 450) + BAR_ROOM))
    for bar in bars:
        _horizontal(bar, -(room + BAR_TITLE_PX) / plot_h, font)


def _horizontal(bar: Any, y: float, font: float) -> None:
    """A colour bar lying under a plot at paper height y (the top of its bar: its title sits
    above that, BAR_TITLE_PX), its ticks thinned to fit the plot's width on a phone (about
    PLOT_PX)."""
    bar.update(orientation="h", x=0.5, xanchor="center", y=y, yanchor="top", len=0.9,
               lenmode="fraction", thickness=12, title={"side": "top"})  # fmt: skip
    thin_bar_ticks(bar, PLOT_PX * 0.9, font, horizontal=True)


def _row_title_up(fig: go.Figure, panel: Panel) -> None:
    """One plot's y axis title moved under the figure's title ("rows: query"): upright beside
    the labels it took a phone's plot 20 px of its width."""
    axis = fig.layout[panel.y]
    said = axis.title.text
    if not said or not fig.layout.title.text:
        return
    axis.title.text = None  # none: an empty title still took its room
    subtitle = fig.layout.title.subtitle.text
    fig.layout.title.subtitle.text = f"{subtitle}<br>rows: {said}" if subtitle else f"rows: {said}"
    if fig.layout.title.yref == "paper":
        fig.layout.title.pad.b = round((fig.layout.title.pad.b or 0) + 18)
    top = fig.layout.margin.t
    fig.layout.margin.t = round((top if top is not None else 100) + 18)


def _wrap_titles(fig: go.Figure, width: int, font: float) -> None:
    """The title, its subtitle and the panels' titles in lines that fit the width; the top
    margin grown by the title's added lines."""
    title = fig.layout.title
    size = float(title.font.size or font + 4)
    grown = 0.0  # px the title's lines grew by
    if title.text:  # each of its lines wrapped; "· layer 1" never starts one
        chars = max(12, int(width / (size * 0.58)))
        lines = [wrapped(line.replace(" · ", "\u00a0· "), chars).replace("\u00a0", " ")
                 for line in title.text.split("<br>")]  # fmt: skip
        title.text = "<br>".join(lines)
        grown += sum(line.count("<br>") for line in lines) * size * 1.3
    subtitle = title.subtitle.text
    if subtitle:
        chars = max(16, int(width / (font * 0.55)))
        lines = [wrapped(line, chars) for line in subtitle.split("<br>")]
        title.subtitle.text = "<br>".join(lines)
        grown += sum(line.count("<br>") for line in lines) * font * 1.3
    if grown:
        top = fig.layout.margin.t
        fig.layout.margin.t = round((top if top is not None else 100) + grown)
        if title.yref == "paper":  # resting on the plot: its lines after the first go below
            title.pad.b = round((title.pad.b or 0) + grown)
        else:  # hung from the top, where Plotly lifts a title of several lines by about
            # the lines it added: its first line clear of the edge
            title.update(yref="container", y=1, yanchor="top", pad_t=round(8 + grown))
    for note in fig.layout.annotations:
        if note.text and note.xref == "paper":
            chars = max(16, int(width / ((note.font.size or 16) * 0.58)))
            note.text = "<br>".join(wrapped(line, chars) for line in note.text.split("<br>"))


def _categories(fig: go.Figure, axis: str) -> list[str]:
    """The category values a trace puts on an axis (its first trace's x or y)."""
    letter = axis[0]
    for trace in fig.data:
        if _axis_name(getattr(trace, f"{letter}axis", None), letter) == axis:
            values = getattr(trace, letter, None)
            if values is not None and len(values) and isinstance(values[0], str):
                return [str(v) for v in values]
    return []


def _short_ticks(fig: go.Figure, panel: Panel, width: int, font: float) -> None:
    """Tick labels of category axes cut to what fits beside the plot (a y axis) and thinned
    so that they stand apart (an x axis along the width; a y axis down its height)."""
    plot_h = _plot_height(fig) * (panel.ydom[1] - panel.ydom[0])
    for name, along in ((panel.y, plot_h), (panel.x, width * 0.7)):
        axis = fig.layout[name]
        values = list(axis.tickvals) if axis.tickvals is not None else _categories(fig, name)
        texts = list(axis.ticktext) if axis.ticktext is not None else values
        if not values or (not isinstance(values[0], str) and axis.ticktext is None):
            continue
        if name.startswith("y"):
            texts = fitted([str(t) for t in texts], width * LABEL_SHARE, font)
        step = max(1, math.ceil(len(values) * font * TICK_GAP / max(along, 1.0)))
        axis.update(tickmode="array", tickvals=values[::step], ticktext=texts[::step])
    if fig.layout.margin.l is not None:
        labels = fig.layout[panel.y].ticktext or []
        room = 14 if not fig.layout[panel.y].title.text else 40  # the axis title's, if any
        fig.layout.margin.l = min(fig.layout.margin.l, round(widest_px(labels, font) + room))


def fitted(labels: list[str], room: float, font: float) -> list[str]:
    """Labels that fit in `room` px: as they are when they all do; else, where they name
    positions ("12 · e → H"), without the numbers (the hover still gives them), every one
    alike; then each cut with an ellipsis."""
    if all(text_px(label, font) <= room for label in labels):
        return labels
    bare = [NUMBERED.sub("", label) for label in labels]
    if sum(1 for a, b in zip(labels, bare, strict=True) if a != b) * 2 >= len(labels):
        labels = bare
    return [_cut(label, room, font) for label in labels]


def _cut(label: str, room: float, font: float) -> str:
    """A label cut to `room` px, an ellipsis in place of the rest."""
    if text_px(label, font) <= room:
        return label
    while label and text_px(label + "…", font) > room:
        label = label[:-1]
    return label.rstrip() + "…"


def _cell_text(fig: go.Figure, panel: Panel, width: int) -> None:
    """Numbers written in a heatmap's cells dropped where a cell is narrower than they are."""
    for trace in fig.data:
        if trace.type != "heatmap" or not (trace.texttemplate or trace.text is not None):
            continue
        if (_axis_name(trace.xaxis, "x"), _axis_name(trace.yaxis, "y")) != (panel.x, panel.y):
            continue
        columns = len(trace.z[0]) if trace.z is not None and len(trace.z) else 1
        if width * 0.7 / max(columns, 1) < CELL_TEXT_PX:
            trace.update(texttemplate=None, text=None)
