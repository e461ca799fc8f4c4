"""What a real browser drew for the app's figures, read back from the page: text sizes and
colours against what lies behind them, overlapping titles, clipped titles, blank plot areas.

Each check is a JavaScript function run with Playwright's page.evaluate over every Plotly
figure on the page; the Python side turns the answers into lists of problems (empty = fine).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

_JS = (Path(__file__).parent / "figure_texts.js").read_text().splitlines()
TEXTS = "\n".join(line for line in _JS if not line.startswith("//"))  # a function expression


def _over(top: list[float] | None, bottom: list[float]) -> list[float]:
    """An RGBA colour painted over an opaque one."""
    if top is None:
        return bottom
    a = top[3]
    return [a * top[i] + (1 - a) * bottom[i] for i in range(3)] + [1.0]


def luminance(rgb: list[float]) -> float:
    """WCAG relative luminance of an sRGB colour (0–255 channels)."""

    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: list[float], b: list[float]) -> float:
    """WCAG contrast ratio, 1 (same colour) to 21 (black on white)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def texts(page: Any) -> list[dict[str, Any]]:
    """Every visible text of every figure on the page, with what the browser drew it as."""
    return list(page.evaluate(TEXTS))


def behind(text: dict[str, Any]) -> list[float]:
    """The colour behind a text: its plot area's, over the paper's, over the page's."""
    area, paper, page = text["behind"]
    return _over(area, _over(paper, page))


def unreadable(found: list[dict[str, Any]], least: float = 3.0) -> list[str]:
    """Texts drawn (nearly) in the colour behind them: contrast under `least` (WCAG's 3 for
    large text). Text inside heatmap cells and bars is left out: Plotly picks its colour
    against each cell."""
    bad = []
    for t in found:
        if t["incell"] or t["fill"] is None:
            continue
        ink = _over([*t["fill"][:3], t["fill"][3] * t["opacity"]], behind(t))
        ratio = contrast(ink, behind(t))
        if ratio < least:
            bad.append(f"{t['text']!r} ({t['role'] or t['group']}) contrast {ratio:.2f}")
    return bad


def small(found: list[dict[str, Any]], least: float) -> list[str]:
    """Texts drawn smaller than `least` px."""
    return [
        f"{t['text']!r} ({t['role'] or t['group']}) {t['size']} px"
        for t in found
        if t["size"] < least - 0.5
    ]


def _inside(box: list[float], frame: list[float], slack: float = 1.0) -> bool:
    return (box[0] >= frame[0] - slack and box[1] >= frame[1] - slack
            and box[2] <= frame[2] + slack and box[3] <= frame[3] + slack)  # fmt: skip


def clipped(found: list[dict[str, Any]]) -> list[str]:
    """Texts cut by an edge: titles, ticks, legends and annotations reaching outside their
    figure; text drawn on a plot (clipped to its plot area) reaching across the area's edge.
    Text on a plot wholly outside its area is hidden on purpose (a step not reached yet)."""
    out = []
    for t in found:
        if t["onplot"]:
            cut = t["area"] is not None and not _inside(t["box"], t["area"])
        else:
            cut = not _inside(t["box"], t["frame"])
        if cut:
            out.append(f"{t['text']!r} ({t['role'] or t['group']}) at {t['box']} in {t['frame']}")
    return out


TITLES = ("gtitle", "xtitle", "ytitle", "annotation-text", "legendtext")


def overlapping(found: list[dict[str, Any]], slack: float = 2.0) -> list[str]:
    """Titles (figure, axis, panel) and legend entries that overlap another of them or a
    tick label."""

    def kind(t: dict[str, Any]) -> str:
        if any(r in t["role"] for r in TITLES):
            return "title"
        return "tick" if "tick" in t["group"] else "other"

    def cross(a: list[float], b: list[float]) -> float:
        w = min(a[2], b[2]) - max(a[0], b[0])
        h = min(a[3], b[3]) - max(a[1], b[1])
        return max(0.0, w - slack) * max(0.0, h - slack)

    out = []
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            kinds = {kind(a), kind(b)}
            same = a["plot"] == b["plot"] and "title" in kinds and kinds <= {"title", "tick"}
            if same and cross(a["box"], b["box"]) > 0:
                out.append(f"{a['text']!r} overlaps {b['text']!r}")
    return out


def titles_on_plots(found: list[dict[str, Any]], slack: float = 2.0) -> list[str]:
    """Figure titles and subtitles drawn over a plot area (Plotly rests a title on the plot
    by its first line: a second line came out over the top row of cells)."""
    out = []
    for t in found:
        area, box = t["area"], t["box"]
        if "gtitle" in t["role"] and area is not None:
            h = min(box[3], area[3]) - max(box[1], area[1])
            if h > slack:
                out.append(f"{t['text']!r} reaches {h:.0f} px into its plot area")
    return out


BLOCKS = r"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap((plot, p) =>
  Array.from(plot.querySelectorAll('.shapelayer path')).filter(s => {
    const f = getComputedStyle(s); return f.fill !== 'none' && parseFloat(f.fillOpacity) > 0;
  }).map(s => {
    const b = s.getBoundingClientRect(); const f = getComputedStyle(s);
    const c = (f.fill.match(/[\d.]+/g) || []).map(Number);
    return [p, b.left, b.top, b.right, b.bottom, [c[0], c[1], c[2], parseFloat(f.fillOpacity)]];
  }))
"""


def spilling(page: Any, found: list[dict[str, Any]]) -> list[str]:
    """Texts centred on a filled block (a Plotly shape) that reach out of its sides: the part
    outside sits on whatever lies behind, in a colour chosen for the block. (Only the sides:
    a text's line box is taller than its letters, and than a thin block.)"""
    blocks = page.evaluate(BLOCKS)
    out = []
    for t in found:
        x, y = (t["box"][0] + t["box"][2]) / 2, (t["box"][1] + t["box"][3]) / 2
        for p, *block, _ in blocks:
            centred = p == t["plot"] and block[0] <= x <= block[2] and block[1] <= y <= block[3]
            if centred and not (t["box"][0] >= block[0] - 1 and t["box"][2] <= block[2] + 1):
                out.append(f"{t['text']!r} at {t['box']} out of its block {block}")
    return out


def on_blocks(page: Any, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The texts, each centred on a filled block (a Plotly shape) given that block's colour
    as what lies behind it, so `unreadable` judges a diagram's words against their blocks."""
    blocks = page.evaluate(BLOCKS)
    out = []
    for t in found:
        x, y = (t["box"][0] + t["box"][2]) / 2, (t["box"][1] + t["box"][3]) / 2
        under = [b for b in blocks if b[0] == t["plot"] and b[1] <= x <= b[3] and b[2] <= y <= b[4]]
        if under:
            _, paper, page_colour = t["behind"]
            t = {**t, "behind": [under[-1][5], paper, page_colour]}  # the topmost block
        out.append(t)
    return out


def plot_area(page: Any, nth: int = 0) -> np.ndarray:
    """The grey levels (0 black … 255 white) of one figure's plot area, as drawn."""
    area = page.locator(".js-plotly-plot").nth(nth).locator(".nsewdrag").first
    area.scroll_into_view_if_needed()
    png = area.screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)


def plot_area_spread(page: Any, nth: int = 0) -> float:
    """Standard deviation of the grey levels inside one figure's plot area."""
    return float(plot_area(page, nth).std())


def dark_share(page: Any, nth: int = 0, below: float = 160.0) -> float:
    """The share of a plot area's pixels drawn dark (strong weights on a light scale)."""
    return float((plot_area(page, nth) < below).mean())
