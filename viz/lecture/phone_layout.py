"""A slide's figure laid out again for a student's phone: reflowed, not squeezed (issue 49).

Made for a laptop's column, a slide's panels side by side came to a 330 px phone as slivers
(the heads slide's four 36 px wide) whose titles printed over one another ("Q (que(K)(V)softmax"),
its colour bar wider than the plots, every other token label dropped by Plotly, a cell's number
wider than its cell. Here, in place: the panels are stacked, each the full width with its own
labels and title; the colour bar lies under the plot it belongs to; text is a phone's size; the
title and the panels' titles are wrapped to the width; category labels are all shown when they
fit and thinned evenly when not; numbers go from cells too narrow for them (the hover keeps
them); Figure 1's diagram keeps its layout, its words scaled with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from attnlens.viz.shared.labels import wrapped
from attnlens.viz.shared.margins import text_px, widest_px

PHONE_PX = 330  # the figure's width on a 360-390 px phone, the page's padding taken off
FONT, TICKS, TITLE, NOTE = 13, 12, 17, 14  # px: text, tick labels, the title, panel titles
LINE = 1.3  # a line of text takes this many times its font size
PLOT_MIN, PLOT_MAX, ROW_PX = 150, 300, 26  # a stacked panel's height: per row, within these
GAP, BAR_ROOM = 16, 62  # px between a panel's labels and the next title; a colour bar's room
CELL_TEXT_PX = 28  # a cell narrower than this drops its number
LABEL_PX = 54  # a row's label at most (cut with "…"; the hover has it whole): the plot keeps 250
DIAGRAM_PX = 640  # the width Figure 1's words are scaled from: 9-10 px on a phone
SPREAD = 1.35  # labelled ticks stand this many font sizes apart, at least


@dataclass
class Panel:
    x: str  # "xaxis", "xaxis2", …
    y: str
    xdom: tuple[float, float]
    ydom: tuple[float, float]


def phone_layout(fig: go.Figure, width: int = PHONE_PX) -> go.Figure:
    """The figure, changed in place, for a phone's screen `width` px wide (module text)."""
    _text_sizes(fig)
    if (fig.layout.meta or {}).get("figure") == "stacks":
        scale = width / DIAGRAM_PX
        for note in fig.layout.annotations:
            note.font.size = max(8, round((note.font.size or FONT) * scale))
        _title(fig, width)
        return fig
    panels = panels_of(fig)
    titles = _panel_titles(fig, panels)
    _rows_named_above(fig, panels)
    _title(fig, width)
    if len({p.xdom for p in panels}) > 1:
        _stack(fig, panels, titles)
    else:
        _bar_below(fig, panels)
    for panel in panels:
        _ticks(fig, panel, width)
        _cell_text(fig, panel, width)
    for note in [n for owned in titles.values() for n in owned]:
        note.text = wrapped(note.text.replace("<br>", " "), max(14, int(width / (NOTE * 0.55))))
    fig.update_layout(margin_r=8, margin_l=8)
    return fig


def _text_sizes(fig: go.Figure) -> None:
    """A phone's sizes: a student's screen had 18 px text and 22 px titles."""
    fig.update_layout(font_size=FONT, legend_font_size=FONT, title_font_size=TITLE)
    fig.update_xaxes(tickfont_size=TICKS, title_font_size=FONT)
    fig.update_yaxes(tickfont_size=TICKS, title_font_size=FONT)
    for note in fig.layout.annotations:
        note.font.size = min(note.font.size or NOTE, NOTE)
    for bar in [b for owned in _bar_owners(fig).values() for b in owned]:
        bar.update(tickfont_size=TICKS, title_font_size=FONT)
    for trace in fig.data:
        if "textfont" in trace and trace.textfont.size is not None:
            trace.textfont.size = min(trace.textfont.size, TICKS)


def panels_of(fig: go.Figure) -> list[Panel]:
    """Each pair of axes a trace is drawn on, left to right (then top to bottom)."""
    found: dict[tuple[str, str], Panel] = {}
    for trace in fig.data:
        if "xaxis" not in trace:
            continue
        x, y = _axis(trace.xaxis, "x"), _axis(trace.yaxis, "y")
        if (x, y) not in found:
            xdom, ydom = fig.layout[x].domain or (0, 1), fig.layout[y].domain or (0, 1)
            found[(x, y)] = Panel(x, y, tuple(xdom), tuple(ydom))  # type: ignore[arg-type]
    return sorted(found.values(), key=lambda p: (-p.ydom[1], p.xdom[0]))


def _axis(ref: str | None, letter: str) -> str:
    return f"{letter}axis{(ref or letter)[1:]}"


def _panel_titles(fig: go.Figure, panels: list[Panel]) -> dict[tuple[str, str], list[Any]]:
    """The annotations that title a panel: on the paper, centred over it, at its top."""
    out: dict[tuple[str, str], list[Any]] = {}
    for note in fig.layout.annotations:
        if note.xref != "paper" or note.yref != "paper" or note.x is None or note.y is None:
            continue
        for p in panels:
            if abs(note.x - sum(p.xdom) / 2) < 1e-3 and abs(note.y - p.ydom[1]) < 1e-3:
                out.setdefault((p.x, p.y), []).append(note)
    return out


def _rows_named_above(fig: go.Figure, panels: list[Panel]) -> None:
    """What the rows are ("decoder position: input → produced") said under the title: upright
    beside the labels it took a phone's plot a line of its width. Every y axis on the left."""
    named = []
    for panel in panels:
        axis = fig.layout[panel.y]
        axis.side = "left"  # a second panel's labels on the right took the width twice
        if axis.title.text and _categories(fig, panel.y):
            if axis.title.text not in named:
                named.append(axis.title.text)
            axis.title.text = None
    if named:
        said = "rows: " + " · ".join(named)
        sub = fig.layout.title.subtitle.text
        fig.layout.title.subtitle.text = f"{sub}<br>{said}" if sub else said


def _title(fig: go.Figure, width: int) -> None:
    """The title and its subtitle in lines that fit the width, hung from the figure's top; the
    top margin holds them and a line of panel title under them."""
    title = fig.layout.title
    lines = 0
    if title.text:
        title.text = wrapped(title.text.replace("<br>", " "), int(width / (TITLE * 0.55)))
        lines = title.text.count("<br>") + 1
    sub = 0
    if title.subtitle.text:
        title.subtitle.text = wrapped(title.subtitle.text.replace("<br>", " "),
                                      int(width / (FONT * 0.55)))  # fmt: skip
        sub = title.subtitle.text.count("<br>") + 1
    if not lines:
        return
    added = ((lines - 1) * TITLE + sub * FONT) * LINE  # Plotly lifts a title by its lines
    top = 8 + added  # after the first (its subtitle's too): its first line clear of the edge
    title.update(yref="container", y=1, yanchor="top", pad_t=round(top), font_size=TITLE)
    room = top + lines * TITLE * LINE + sub * FONT * LINE + NOTE * LINE * 2 + 8
    fig.layout.margin.t = round(room)


def _rows(fig: go.Figure, panel: Panel) -> int:
    """Rows a panel's plot shows (a heatmap's, a bar chart's bars), 8 for anything else."""
    for trace in fig.data:
        if (_axis(trace.xaxis, "x"), _axis(trace.yaxis, "y")) != (panel.x, panel.y):
            continue
        if trace.type == "heatmap" and trace.z is not None:
            return len(trace.z)
        if trace.type == "bar" and trace.orientation == "h" and trace.y is not None:
            return len(trace.y)
    return 8


def _below(fig: go.Figure, panel: Panel) -> float:
    """Room under a panel for its x labels (turned upright when they are long) and title."""
    axis = fig.layout[panel.x]
    if axis.showticklabels is False:
        room = 6.0
    else:
        labels = [str(t) for t in (axis.ticktext or _categories(fig, panel.x) or ["0.00"])]
        widest = widest_px(labels, TICKS)
        room = (min(widest, 110.0) if widest > 3 * TICKS else TICKS * LINE) + 10
    return room + (FONT * LINE + 6 if axis.title.text else 0)


def _stack(fig: go.Figure, panels: list[Panel], titles: dict[tuple[str, str], list[Any]]) -> None:
    """Each panel the full width, one under the other: its title above it, its labels and
    its colour bar under it; the figure as tall as they make it."""
    fig.layout.margin.b = round(_legend_px(fig) + 10)  # the last panel's labels: above it
    bars = _bar_owners(fig)
    heights = [min(PLOT_MAX, max(PLOT_MIN, _rows(fig, p) * ROW_PX)) for p in panels]
    below = [_below(fig, p) + (BAR_ROOM if (p.x, p.y) in bars else 0) + GAP for p in panels]
    above = [NOTE * LINE * 2 + 4 if i else 0 for i in range(len(panels))]
    total = sum(heights) + sum(below) + sum(above)
    fig.layout.height = round(total + _margin(fig, "t") + _margin(fig, "b"))
    at = total  # px from the bottom of the plotting area to the top of the next panel
    for panel, high, room, lift in zip(panels, heights, below, above, strict=True):
        at -= lift
        top, bottom = at / total, (at - high) / total
        fig.layout[panel.y].update(domain=(bottom, top), showticklabels=True)
        fig.layout[panel.x].domain = (0.0, 1.0)
        fig.layout[panel.y].anchor = panel.x.replace("axis", "")
        fig.layout[panel.x].anchor = panel.y.replace("axis", "")
        for note in titles.get((panel.x, panel.y), []):
            note.update(x=0.5, y=top, xanchor="center", yanchor="bottom")
        for bar in bars.get((panel.x, panel.y), []):
            _lay_down(bar, (at - high - _below(fig, panel) - FONT * LINE) / total)
        at -= high + room


def _legend_px(fig: go.Figure, width: int = PHONE_PX) -> float:
    """Room at the foot for the legend's rows (a row there: slide_sizes.screened), 0 for none."""
    if fig.layout.legend.orientation != "h":
        return 0.0
    names = [str(t.name) for t in fig.data if t.name and t.showlegend is not False]
    entries = sum(text_px(name, FONT) + 48 for name in names)  # the symbol and the gaps
    return math.ceil(entries / width) * FONT * LINE * 1.4 + 8


def _bar_below(fig: go.Figure, panels: list[Panel]) -> None:
    """One plot: its colour bar under its labels, the figure grown by the bar's room."""
    owned = _bar_owners(fig)
    if not panels or not owned:
        return
    plot = _plot_px(fig)
    fig.layout.margin.b = round(_margin(fig, "b") + BAR_ROOM)
    fig.layout.height = round((fig.layout.height or 450) + BAR_ROOM)
    for bars in owned.values():
        for bar in bars:
            _lay_down(bar, -(_below(fig, panels[0]) + FONT * LINE) / plot)


def _bar_owners(fig: go.Figure) -> dict[tuple[str, str], list[Any]]:
    """The colour bars Plotly draws, each with the panel of the (first) trace that draws it."""
    out: dict[tuple[str, str], list[Any]] = {}
    done: set[str] = set()
    for trace in fig.data:
        if trace.type != "heatmap" or "xaxis" not in trace:
            continue
        where = (_axis(trace.xaxis, "x"), _axis(trace.yaxis, "y"))
        if trace.coloraxis:  # one bar for every trace that shares the colour axis
            shared = fig.layout[trace.coloraxis]
            if trace.coloraxis not in done and shared.showscale is not False:
                done.add(trace.coloraxis)
                out.setdefault(where, []).append(shared.colorbar)
        elif trace.showscale is not False:
            out.setdefault(where, []).append(trace.colorbar)
    return out


def _lay_down(bar: Any, y: float) -> None:
    """A colour bar lying under its plot, its top at paper height y, its title above it."""
    bar.update(orientation="h", x=0.5, xanchor="center", y=y, yanchor="top", len=0.9,
               thickness=12, title_side="top", yref="paper")  # fmt: skip
    values, texts = bar.tickvals, bar.ticktext
    if values is not None and texts is not None and len(values) > 2:  # ends kept, and those
        keep, used = [0], widest_px([str(texts[0])], TICKS)  # that stand apart between them
        span = (max(values) - min(values)) or 1.0
        for i in range(1, len(values)):
            x = (values[i] - values[0]) / span * PHONE_PX * 0.8
            if x - used >= text_px(str(texts[i]), TICKS) + TICKS:
                keep.append(i)
                used = x + text_px(str(texts[i]), TICKS) / 2
        bar.update(tickvals=[values[i] for i in keep], ticktext=[texts[i] for i in keep])


def _margin(fig: go.Figure, side: str) -> float:
    """A margin as set, else Plotly's default (80 px; 100 at the top)."""
    value = getattr(fig.layout.margin, side)
    return float(value) if value is not None else (100.0 if side == "t" else 80.0)


def _plot_px(fig: go.Figure) -> float:
    """The height of the plotting area: the figure's less its margins."""
    return max(1.0, (fig.layout.height or 450) - _margin(fig, "t") - _margin(fig, "b"))


def _categories(fig: go.Figure, axis: str) -> list[str]:
    letter = axis[0]
    for trace in fig.data:
        if _axis(getattr(trace, f"{letter}axis", None), letter) == axis:
            values = getattr(trace, letter, None)
            if values is not None and len(values) and isinstance(values[0], str):
                return [str(v) for v in values]
    return []


def _ticks(fig: go.Figure, panel: Panel, width: int) -> None:
    """A category axis labels every category when they fit (Plotly dropped every other one
    on its own), else every k-th, evenly."""
    low, high = fig.layout[panel.y].domain or (0, 1)  # as laid out now
    for name, along in ((panel.x, width * 0.72), (panel.y, _plot_px(fig) * (high - low))):
        axis = fig.layout[name]
        values = list(axis.tickvals) if axis.tickvals is not None else _categories(fig, name)
        if not values or axis.showticklabels is False or not isinstance(values[0], str):
            continue
        texts = [str(t) for t in (axis.ticktext if axis.ticktext is not None else values)]
        if name.startswith("y"):
            texts = [_cut(t, LABEL_PX) for t in texts]
        step = max(1, math.ceil(len(values) * TICKS * SPREAD / max(along, 1.0)))
        axis.update(tickmode="array", tickvals=values[::step], ticktext=texts[::step])


def _cut(label: str, room: float) -> str:
    """A label cut to `room` px at the ticks' size, "…" in place of the rest."""
    if text_px(label, TICKS) <= room:
        return label
    while label and text_px(label + "…", TICKS) > room:
        label = label[:-1]
    return label.rstrip() + "…"


def _cell_text(fig: go.Figure, panel: Panel, width: int) -> None:
    """Numbers written in a heatmap's cells go where a cell is narrower than they are."""
    for trace in fig.data:
        if trace.type != "heatmap" or not (trace.texttemplate or trace.text is not None):
            continue
        if (_axis(trace.xaxis, "x"), _axis(trace.yaxis, "y")) != (panel.x, panel.y):
            continue
        columns = len(trace.z[0]) if trace.z is not None and len(trace.z) else 1
        if width * 0.72 / max(columns, 1) < CELL_TEXT_PX:
            trace.update(texttemplate=None, text=None)
        else:
            trace.textfont.size = min(trace.textfont.size or TICKS, TICKS - 1)
