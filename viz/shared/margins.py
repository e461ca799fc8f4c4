"""Room around a grid for its labels and title, estimated from the text itself.

Plotly can find that room on its own (`automargin`), but it does so by drawing the figure,
measuring the labels and drawing it again, once per side that grows: Explore's heatmap took
2–2.5 times as long to draw that way. Margins estimated here from the labels' lengths are
set before the first draw; automargin stays on behind them, so a label the estimate finds
too short for (an unusual font, a glyph wider than guessed) still gets its room, at the
price of that redraw. The estimate errs on the wide side for Source Sans, the font
Streamlit's theme draws figures in (ticks 12 px, axis titles 14 px, titles 16 px).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

BASE_FONT = 12  # px: the text size figures are laid out for
AXIS_ROOM = 64  # px beside the tick labels: their gap, the axis title with its standoff, pad
TITLE_LINE = 21  # px per line of a 16 px title
TITLE_ROOM = 20  # px above and below the title's lines
SIDE = 10  # px on a side with no labels (the colour bar claims its own room)
# Advance widths in em, a little over Source Sans's own (a fallback font may be wider: then
# automargin makes up the difference).
NARROW = dict.fromkeys("ijl.,:;'!|·", 0.3) | dict.fromkeys('frt()[]{}/\\-"', 0.42)
WIDE_LETTERS = dict.fromkeys("mw", 0.9) | dict.fromkeys("MW", 0.92)
TAG = re.compile(r"<[^>]*>")
ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&"}


def char_em(ch: str) -> float:
    """The advance width of one character in em (a generous guess by its class)."""
    if ch in NARROW or ch in WIDE_LETTERS:
        return NARROW.get(ch) or WIDE_LETTERS[ch]
    if ch == " ":
        return 0.22
    if ch.isdigit() and ch.isascii():
        return 0.55
    if ch.isascii() and ch.isalpha():
        return 0.7 if ch.isupper() else 0.58
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.05
    if unicodedata.combining(ch):
        return 0.0
    return 0.9  # arrows, symbols, other scripts


def plain_lines(markup: str) -> list[str]:
    """Plotly's label markup as the lines of text it draws: <br> breaks, tags dropped,
    entities decoded."""
    lines = re.split(r"<br\s*/?>", markup, flags=re.IGNORECASE)
    out = []
    for line in lines:
        text = TAG.sub("", line)
        for entity, ch in ENTITIES.items():
            text = text.replace(entity, ch)
        out.append(text)
    return out


def text_px(markup: str, font_px: float = BASE_FONT) -> float:
    """Estimated width in pixels of a label's longest line at font_px."""
    return max(sum(map(char_em, line)) for line in plain_lines(markup)) * font_px


def balanced_lines(text: str) -> str:
    """A one-line label broken in two at the space nearest its middle (as it stands if it
    has no space)."""
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if not spaces or "<br>" in text:
        return text
    cut = min(spaces, key=lambda i: abs(text_px(text[:i]) - text_px(text[i + 1 :])))
    return f"{text[:cut]}<br>{text[cut + 1 :]}"


def title_px(title: str) -> int:
    """Room above a plot for every line of its title (none for no title)."""
    return TITLE_ROOM + TITLE_LINE * (len(plain_lines(title)) if title else 0)


def widest_px(labels: Sequence[str], font_px: float = BASE_FONT) -> float:
    """The widest of the labels (0 for none)."""
    return max((text_px(label, font_px) for label in labels), default=0.0)


def grid_margins(title: str, x_labels: Sequence[str], y_labels: Sequence[str]) -> dict[str, int]:
    """Margins for a grid with tick labels on the left (y) and below (x), each axis titled,
    and a title above: room for the widest label on each side (the x labels as if turned
    upright, as Plotly turns them when they crowd) and every line of the title."""
    return {
        "l": math.ceil(widest_px(y_labels) + AXIS_ROOM),
        "r": SIDE,
        "t": title_px(title),
        "b": math.ceil(widest_px(x_labels) + AXIS_ROOM),
    }
