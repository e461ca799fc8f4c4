"""A figure laid out again for a phone: reflowed, not squeezed (issue 49).

In a 330 px column a laptop's layout left panels side by side a sliver each, their titles over
one another, a colour bar wider than the plots, every other label dropped, numbers wider than
their cells. One layout for every phone's figure (Explore, Inside, the Lecture, a student's
slide): panels stacked, each the full width, as tall as its rows, its title above and its
labels and colour bar (horizontal, ticks thinned) below, every y axis on the left; text at most
a phone's size, titles wrapped, a row axis's title said under the title ("rows: query");
labels all shown when they fit, thinned evenly when not, a row's cut to LABEL_PX so the plot
keeps PLOT_PX; numbers in cells narrower than they are dropped (the hover keeps them); a legend
at the foot; Figure 1 keeps its layout, its words scaled with it. `width` is what the layout
is planned for; the figure's width stays the page's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from attnlens.viz.shared.labels import wrapped
from attnlens.viz.shared.margins import fitted, text_px, widest_px
from attnlens.viz.shared.style import PROJECTOR_FONT, thin_bar_ticks

NARROW_PX = 640  # a screen narrower than this is a phone's (Streamlit stacks columns there too)
PHONE_PX = 330  # the figure's width planned for: a 360–390 px screen less the page's padding
PLOT_PX = 250  # and its plot's, the row labels beside it
FONT, TICKS, TITLE, NOTE = 13, 12, 17, 14  # px at most: text, tick labels, title, panel titles
LINE, SUB_LINE = 1.3, 1.6  # a line of text takes this many times its font size (a subtitle's)
PANEL_MIN, PANEL_MAX, ROW_PX = 150, 300, 26  # a stacked panel's height: per row, within these
GAP, BAR_ROOM = 16, 62  # px between a panel's labels and the next title; a colour bar's room
CELL_TEXT_PX = 28  # a cell narrower than this drops its number
LABEL_PX = 54  # a row's label at most (the hover has it whole): the plot keeps PLOT_PX
DIAGRAM_PX, DIAGRAM_FONT = 830, 8  # Figure 1's width at projector text; its smallest text
KEEP_WITH_LAST = re.compile(r" (?=[·=\d])")  # a space a line may not break at in a title
SPREAD = 1.35  # labelled ticks stand this many font sizes apart, at least
SCALED = ("heatmap", "contour", "histogram2d")  # traces that draw a colour bar of their own
NO_LEGEND = (*SCALED, "surface", "image", "table")  # not in a legend unless told


@dataclass(frozen=True)
class Panel:
    """One plot of the figure: its axes' names and their domains on the paper."""

    x: str  # "xaxis", "xaxis2", …
    y: str
    xdom: tuple[float, float]
    ydom: tuple[float, float]


def narrowed(fig: go.Figure, width: int = PHONE_PX) -> go.Figure:
    """The figure, changed in place, for a phone's screen `width` px wide (module text)."""
    if (fig.layout.meta or {}).get("figure") == "stacks":
        _diagram_text(fig, width)
        _text_sizes(fig)
        _title(fig, width, 0)
        return fig
    _text_sizes(fig)
    panels = panels_of(fig)
    titles = _panel_titles(fig, panels)
    moved = _legend_at_foot(fig)
    said = _rows_named_above(fig, panels)
    stacked = len({p.xdom for p in panels}) > 1
    _title(fig, width, said, hang=stacked)
    if stacked:
        _stack(fig, panels, titles, width)
    else:
        _bar_below(fig, panels)
        if moved:
            fig.layout.margin.b = round(_margin(fig, "b") + _legend_px(fig, width))
    for panel in panels:
        _ticks(fig, panel, width)
        _cell_text(fig, panel, width)
    _wrap_notes(fig, titles, width)
    fig.update_layout(margin_r=8, margin_l=8, margin_pad=0)
    return fig


def _text_sizes(fig: go.Figure) -> None:
    """Every text at most a phone's size: a slide's figure comes to a phone at a student
    screen's 18 px or a projector's 24, which left two letters of a token beside a plot."""

    def cap(font: Any, most: int = FONT, fill: bool = False) -> None:
        if font.size is not None or fill:  # fill: one unset (the layout's) set too
            font.size = min(font.size or most, most)

    layout = fig.layout
    cap(layout.font, FONT, True)
    cap(layout.title.font, TITLE, True)
    for font in (layout.title.subtitle.font, layout.legend.font, layout.hoverlabel.font):
        cap(font)
    for note in layout.annotations:
        cap(note.font, NOTE)
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        cap(axis.tickfont, TICKS, True)  # else the layout's FONT
        cap(axis.title.font)
    for bar in [b for owned in _bar_owners(fig).values() for b in owned]:
        cap(bar.tickfont, TICKS, True)
        cap(bar.title.font)
    for trace in fig.data:
        for prop in [p for p in ("textfont", "insidetextfont", "outsidetextfont") if p in trace]:
            cap(trace[prop], TICKS)


def _diagram_text(fig: go.Figure, width: int) -> None:
    """A diagram drawn in its own units (Figure 1's stacks, viz/lecture/architecture.py)
    shrinks with the page: its words with it, in their own proportions, its largest as a
    projector's fit the DIAGRAM_PX it was laid out for, none under DIAGRAM_FONT px."""
    notes = list(fig.layout.annotations)
    largest = max((n.font.size or FONT for n in notes), default=FONT)
    scale = PROJECTOR_FONT * width / DIAGRAM_PX / largest
    for note in notes:
        note.font.size = max(DIAGRAM_FONT, round((note.font.size or FONT) * scale))
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


def _on(trace: Any, panel: Panel) -> bool:  # whether a trace is drawn on the panel
    if "xaxis" not in trace or "yaxis" not in trace:
        return False
    return (_axis_name(trace.xaxis, "x"), _axis_name(trace.yaxis, "y")) == (panel.x, panel.y)


def _panel_titles(fig: go.Figure, panels: list[Panel]) -> dict[tuple[str, str], list[Any]]:
    """The annotations that title a panel (make_subplots puts them at the middle of its top)."""
    out: dict[tuple[str, str], list[Any]] = {}
    for note in fig.layout.annotations:
        if note.xref != "paper" or note.yref != "paper" or note.x is None or note.y is None:
            continue
        for p in panels:
            if abs(note.x - sum(p.xdom) / 2) < 1e-3 and abs(note.y - p.ydom[1]) < 1e-3:
                out.setdefault((p.x, p.y), []).append(note)
    return out


def shows_legend(fig: go.Figure) -> bool:
    """Whether Plotly draws a legend: the layout asks, or two traces show in it (not a heatmap)."""
    if fig.layout.showlegend is not None:
        return bool(fig.layout.showlegend)
    shown = [t for t in fig.data
             if t.showlegend or (t.showlegend is None and t.type not in NO_LEGEND)]  # fmt: skip
    return len(shown) >= 2


def _legend_at_foot(fig: go.Figure) -> bool:
    """A legend at the right took most of a phone's width: in rows at the foot (if moved)."""
    if not shows_legend(fig) or fig.layout.legend.orientation == "h":
        return False
    fig.update_layout(legend={"orientation": "h", "yref": "container", "y": 0,
                              "yanchor": "bottom", "x": 0, "xanchor": "left"})  # fmt: skip
    return True


def _legend_px(fig: go.Figure, width: int) -> float:
    """Room at the foot for a legend's rows there, 0 for none."""
    if fig.layout.legend.orientation != "h" or not shows_legend(fig):
        return 0.0
    names = [str(t.name) for t in fig.data if t.name and t.showlegend is not False]
    entries = sum(text_px(name, FONT) + 48 for name in names)  # the symbol and the gaps
    return math.ceil(entries / width) * FONT * LINE * 1.4 + 8


def _rows_named_above(fig: go.Figure, panels: list[Panel]) -> int:
    """What the rows are ("rows: query") said under the title (upright, it took a phone's plot
    a line of its width); every y axis on the left. The subtitle's lines added: 0 or 1."""
    named: list[str] = []
    for panel in panels:
        axis = fig.layout[panel.y]
        axis.side = "left"
        labelled = axis.ticktext is not None or _categories(fig, panel.y)
        if axis.title.text and labelled and fig.layout.title.text:
            if axis.title.text not in named:
                named.append(axis.title.text)
            axis.title.text = None  # none: an empty title still took its room
    if not named:
        return 0
    said = "rows: " + " · ".join(named)
    sub = fig.layout.title.subtitle.text
    fig.layout.title.subtitle.text = f"{sub}<br>{said}" if sub else said
    return 1


def _lines(text: str, chars: int) -> str:
    """Each of the text's lines wrapped at `chars`; no line starts with "·", "=" or a number
    ("decoder self-attention · layer / 2 · head 0" split a head's name on Explore)."""
    lines = [KEEP_WITH_LAST.sub("\u00a0", line) for line in text.split("<br>")]
    return "<br>".join(wrapped(line, chars).replace("\u00a0", " ") for line in lines)


def _title(fig: go.Figure, width: int, said: int, hang: bool = False) -> None:
    """The title and its subtitle in lines that fit the width. Resting on one plot (a grid's,
    yref paper) it is padded by the lines added; else (or over stacked panels: `hang`) it hangs
    from the figure's top, and the top margin holds it and a line or two of panel title."""
    title = fig.layout.title
    if not title.text:
        return
    size = float(title.font.size or TITLE)
    before = title.text.count("<br>") + 1
    if title.yref != "paper" or hang:  # hung from the top: its lines were a wider screen's
        title.text = title.text.replace("<br>", " ")  # (slide_sizes.screened: 26 characters)
    title.text = _lines(title.text, max(12, int(width / (size * 0.58))))
    lines = title.text.count("<br>") + 1
    sub = new = 0  # the subtitle's lines, and those it gained
    sub_size = float(title.subtitle.font.size or FONT)
    if title.subtitle.text:
        had = title.subtitle.text.count("<br>") + 1 - said
        title.subtitle.text = _lines(title.subtitle.text, max(16, int(width / (sub_size * 0.55))))
        sub = title.subtitle.text.count("<br>") + 1
        new = sub - had
    if title.yref == "paper" and not hang:  # a subtitle's line there takes ~21 px, not 17
        added = (lines - before) * size * LINE + new * sub_size * SUB_LINE
        title.pad.b = round((title.pad.b or 0) + added)
        _taller_top(fig, _margin(fig, "t") + added)
        return
    top = 8 + ((lines - 1) * size + sub * FONT) * LINE  # Plotly lifts a title by its lines
    title.update(yref="container", y=1, yanchor="top", pad_t=round(top), pad_b=0)
    room = top + lines * size * LINE + sub * FONT * LINE + NOTE * LINE * 2 + 8
    _taller_top(fig, room)


def _taller_top(fig: go.Figure, top: float) -> None:
    """The top margin set to `top`, the figure grown by what it gained: the plot keeps its
    height (a 7-row heatmap under a wrapped title was squeezed to 100 px)."""
    gained = top - _margin(fig, "t")
    fig.layout.margin.t = round(top)
    if gained > 0:
        fig.layout.height = round((fig.layout.height or 450) + gained)


def _wrap_notes(fig: go.Figure, titles: dict[tuple[str, str], list[Any]], width: int) -> None:
    """Panels' titles (now the full width) wrapped as one, other notes line by line."""
    owned = {id(n) for notes in titles.values() for n in notes}
    for note in [n for n in fig.layout.annotations if n.text and n.xref == "paper"]:
        chars = max(14, int(width / ((note.font.size or NOTE) * 0.58)))
        text = note.text.replace("<br>", " ") if id(note) in owned else note.text
        note.text = _lines(text, chars)


def _rows(fig: go.Figure, panel: Panel) -> int:
    """Rows a panel's plot shows (a heatmap's, a bar chart's bars), 8 for anything else."""
    for trace in fig.data:
        if not _on(trace, panel):
            continue
        if trace.type == "heatmap" and trace.z is not None:
            return len(trace.z)
        if trace.type == "bar" and trace.orientation == "h" and trace.y is not None:
            return len(trace.y)
    return 8


def _below(fig: go.Figure, panel: Panel) -> float:
    """Room under a panel for its x labels (Plotly turns long ones upright) and title."""
    axis = fig.layout[panel.x]
    if axis.showticklabels is False:
        room = 6.0
    else:
        labels = [str(t) for t in (axis.ticktext or _categories(fig, panel.x) or ["0.00"])]
        widest = widest_px(labels, TICKS)
        room = (min(widest, 110.0) if widest > 3 * TICKS else TICKS * LINE) + 10
    return room + (FONT * LINE + 6 if axis.title.text else 0)


def _stack(
    fig: go.Figure, panels: list[Panel], titles: dict[tuple[str, str], list[Any]], width: int
) -> None:
    """Each panel the full width, one under the other: its title above it, its labels and
    its colour bar under it; the figure as tall as they make it."""
    fig.layout.margin.b = round(_legend_px(fig, width) + 10)  # the last panel's labels: above
    bars = _bar_owners(fig)
    heights = [min(PANEL_MAX, max(PANEL_MIN, _rows(fig, p) * ROW_PX)) for p in panels]
    below = [_below(fig, p) + (BAR_ROOM if (p.x, p.y) in bars else 0) + GAP for p in panels]
    above = [NOTE * LINE * 2 + 4 if i else 0 for i in range(len(panels))]
    total = sum(heights) + sum(below) + sum(above)
    fig.layout.height = round(total + _margin(fig, "t") + _margin(fig, "b"))
    at = total  # px from the bottom of the plotting area to the top of the next panel
    for panel, high, room, lift in zip(panels, heights, below, above, strict=True):
        at -= lift
        top, bottom = at / total, (at - high) / total
        fig.layout[panel.y].update(domain=(bottom, top), showticklabels=True)
        fig.layout[panel.x].domain = (0.0, 1.0)  # its labels as drawn: _below made their room
        fig.layout[panel.y].anchor = panel.x.replace("axis", "")
        fig.layout[panel.x].anchor = panel.y.replace("axis", "")
        for note in titles.get((panel.x, panel.y), []):
            note.update(x=0.5, y=top, xanchor="center", yanchor="bottom")
        for bar in bars.get((panel.x, panel.y), []):
            _lay_down(bar, (at - high - _below(fig, panel) - FONT * LINE) / total)
        at -= high + room


def _bar_owners(fig: go.Figure) -> dict[tuple[str, str], list[Any]]:
    """The colour bars drawn, each with the panel of the (first) trace that draws it."""
    out: dict[tuple[str, str], list[Any]] = {}
    done: set[str] = set()
    for trace in fig.data:
        if "xaxis" not in trace or "yaxis" not in trace:
            continue
        where = (_axis_name(trace.xaxis, "x"), _axis_name(trace.yaxis, "y"))
        if getattr(trace, "coloraxis", None):  # one bar for every trace sharing the axis
            shared = fig.layout[trace.coloraxis]
            if trace.coloraxis not in done and shared.showscale is not False:
                done.add(trace.coloraxis)
                out.setdefault(where, []).append(shared.colorbar)
        elif trace.type in SCALED and trace.showscale is not False:
            out.setdefault(where, []).append(trace.colorbar)
    return out


def _bar_below(fig: go.Figure, panels: list[Panel]) -> None:
    """One plot: its colour bar under its labels, the figure grown by the bar's room."""
    owned = _bar_owners(fig)
    if not panels or not owned:
        return
    plot = _plot_px(fig)
    fig.layout.margin.b = round(_margin(fig, "b") + BAR_ROOM)
    fig.layout.height = round((fig.layout.height or 450) + BAR_ROOM)
    for bar in [b for bars in owned.values() for b in bars]:
        _lay_down(bar, -(_below(fig, panels[0]) + FONT * LINE) / plot)


def _lay_down(bar: Any, y: float) -> None:
    """A colour bar lying under its plot, its top at paper height y, its title above it, its
    ticks thinned to fit the plot's width on a phone (about PLOT_PX)."""
    bar.update(orientation="h", x=0.5, xanchor="center", y=y, yanchor="top", len=0.9,
               lenmode="fraction", thickness=12, title_side="top", yref="paper")  # fmt: skip
    thin_bar_ticks(bar, PLOT_PX * 0.9, bar.tickfont.size or TICKS, horizontal=True)


def _margin(fig: go.Figure, side: str) -> float:
    """A margin as set, else Plotly's default (80 px; 100 at the top)."""
    value = getattr(fig.layout.margin, side)
    return float(value) if value is not None else (100.0 if side == "t" else 80.0)


def _plot_px(fig: go.Figure) -> float:
    """The height of the plotting area: the figure's less its margins."""
    return max(1.0, (fig.layout.height or 450) - _margin(fig, "t") - _margin(fig, "b"))


def _categories(fig: go.Figure, axis: str) -> list[str]:
    """The category values a trace puts on an axis (its first trace's x or y)."""
    letter = axis[0]
    for trace in fig.data:
        if _axis_name(getattr(trace, f"{letter}axis", None), letter) == axis:
            values = getattr(trace, letter, None)
            if values is not None and len(values) and isinstance(values[0], str):
                return [str(v) for v in values]
    return []


def _ticks(fig: go.Figure, panel: Panel, width: int) -> None:
    """A labelled axis shows every label when they fit (Plotly dropped every other one on
    its own), else every k-th, evenly; a row's label is cut to LABEL_PX."""
    low, high = fig.layout[panel.y].domain or (0, 1)  # as laid out now
    for name, along in ((panel.x, width * 0.72), (panel.y, _plot_px(fig) * (high - low))):
        axis = fig.layout[name]
        values = list(axis.tickvals) if axis.tickvals is not None else _categories(fig, name)
        texts = [str(t) for t in (axis.ticktext if axis.ticktext is not None else values)]
        named = bool(values) and (isinstance(values[0], str) or axis.ticktext is not None)
        if not named or axis.showticklabels is False:
            continue
        size = axis.tickfont.size or TICKS
        if name.startswith("y"):
            texts = fitted(texts, LABEL_PX, size)
        step = max(1, math.ceil(len(values) * size * SPREAD / max(along, 1.0)))
        axis.update(tickmode="array", tickvals=values[::step], ticktext=texts[::step])


def _cell_text(fig: go.Figure, panel: Panel, width: int) -> None:
    """Numbers written in a heatmap's cells go where a cell is narrower than they are; where
    they stay, a size under the ticks'."""
    for trace in fig.data:
        if trace.type != "heatmap" or not (trace.texttemplate or trace.text is not None):
            continue
        if not _on(trace, panel):
            continue
        columns = len(trace.z[0]) if trace.z is not None and len(trace.z) else 1
        if width * 0.72 / max(columns, 1) < CELL_TEXT_PX:
            trace.update(texttemplate=None, text=None)
        else:
            trace.textfont.size = min(trace.textfont.size or TICKS, TICKS - 1)
