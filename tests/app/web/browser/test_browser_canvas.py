"""Explore's canvases in Chromium. The every-head grid: drawn (square cells on a phone and a
desktop), a click on a thumbnail picking its layer and head, every time, the hover naming head,
tokens and weight, labels in the dark theme's colours; a 500-token minilm input drawn readably on
a short page.
The lines view: drawn, its tokens as text, the hover naming a line's tokens and weight."""

from __future__ import annotations

import json
import random
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.apptest import require_bundled

pytestmark = pytest.mark.browser
HOST = "[data-testid=stBidiComponentIsolated]"  # a component's element; its canvas in its shadow
CANVAS = f"{HOST} canvas.hg-canvas"
LINES = f"{HOST} canvas.lv-canvas"
CANVASES = """Array.from(document.querySelectorAll('[data-testid=stBidiComponentIsolated]'),
  (h) => h.shadowRoot && h.shadowRoot.querySelector('canvas[data-drawn]')).filter(Boolean)"""
DRAWN = f"() => {CANVASES}.length === 2 && !!document.querySelector('.js-plotly-plot')"
# Pixels of one canvas (by class): how many are drawn (alpha > 0), how many there are, and
# the colour at (x, y) in css px.
PIXELS = f"""([name, x, y]) => {{
  const c = {CANVASES}.find((c) => c.classList.contains(name));
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let drawn = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) drawn++;
  const s = c.width / c.getBoundingClientRect().width, at = (Math.round(y * s) * c.width
    + Math.round(x * s)) * 4;
  return {{ drawn, total: d.length / 4, scale: s,
            at: [d[at], d[at + 1], d[at + 2], d[at + 3]] }};
}}"""
BOTH_DRAWN = f"""() => ['hz-canvas', 'hg-canvas'].every((name) =>
  {CANVASES}.some((c) => c.classList.contains(name)))"""
HOST_HEIGHT = """(name) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
  .find((h) => h.shadowRoot && h.shadowRoot.querySelector('canvas.' + name)).offsetHeight"""
HEIGHTS = """() => ({
  page: document.querySelector('[data-testid="stMain"]').scrollHeight,
  charts: Array.from(document.querySelectorAll('.js-plotly-plot'), (p) => p._fullLayout.height),
  drawn: Array.from(document.querySelectorAll('[data-testid=stBidiComponentIsolated]'),
    (h) => h.offsetHeight),
})"""


def explore(browser: Any, url: str, width: int, query: str = "text=bad", **options: Any) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900}, **options)
    page.goto(f"{url}/?{query}", timeout=120_000)
    page.wait_for_function(DRAWN, timeout=120_000)
    page.wait_for_timeout(500)  # the page takes its final width
    page.locator(CANVAS).scroll_into_view_if_needed()
    return page


@pytest.fixture(scope="module")
def desktop(browser: Any, server: str) -> Iterator[Any]:
    """Explore on "bad" at 1400 px, loaded once for the tests that only read it (the checks of
    the cells, the hovers, then the theme picked in the menu, in this file's order)."""
    page = explore(browser, server, 1400)
    yield page
    page.close()


def page_at(request: pytest.FixtureRequest, browser: Any, server: str, width: int) -> Any:
    """The shared desktop page at 1400 px (scrolled back to its grid), else a new tab."""
    if width != 1400:
        return explore(browser, server, width)
    page = request.getfixturevalue("desktop")
    page.locator(CANVAS).scroll_into_view_if_needed()
    return page


def geometry(page: Any) -> dict[str, float]:
    """Where the thumbnails are on the canvas, in css px (head_grid.js writes it down)."""
    return dict(json.loads(page.locator(CANVAS).get_attribute("data-geometry")))


def tile_point(
    g: dict[str, float], layer: int, head: int, fx: float, fy: float
) -> dict[str, float]:
    """A point of thumbnail (layer, head), fx and fy across it (0.5, 0.5: its centre)."""
    return {"x": g["left"] + head * g["pitch"] + fx * g["tileW"],
            "y": g["top"] + layer * g["pitchY"] + fy * g["tileH"]}  # fmt: skip


def pickers(page: Any) -> tuple[str, str]:
    return tuple(  # type: ignore[return-value]
        page.get_by_role("combobox", name=n).input_value() for n in ("Layer", "Head")
    )


def enlarged(head: str) -> str:
    return (
        "() => { const p = document.querySelector('.js-plotly-plot');"
        f" return !!(p && p.layout && p.layout.title.text.includes('{head}')); }}"
    )


@pytest.mark.parametrize("width", [390, 1400])
def test_the_canvas_is_drawn_with_square_cells_on_a_phone_and_a_desktop(
    request: pytest.FixtureRequest, browser: Any, server: str, width: int
) -> None:
    """The tiny model: 2 layers × 2 heads of cross-attention, 4 keys ("bad": b a d </s>) and
    as many rows as the (untrained) model wrote."""
    page = page_at(request, browser, server, width)
    g = geometry(page)
    rows = g["tileH"] / g["cell"]
    assert g["tileW"] / 4 == pytest.approx(g["cell"]) and rows == pytest.approx(round(rows))
    assert g["tileW"] >= 40  # two heads side by side, whatever the width
    px = page.evaluate(PIXELS, ["hg-canvas", g["left"] + g["tileW"] / 2, g["top"] + g["tileH"] / 2])
    tiles = 2 * 2 * g["tileW"] * g["tileH"] * px["scale"] ** 2  # in the canvas's own pixels
    assert px["drawn"] >= 0.95 * tiles  # every cell drawn (no mask on cross-attention)
    assert px["at"][3] == 255 and px["at"][2] > px["at"][0]  # opaque, a blue of the scale
    gap = page.evaluate(
        PIXELS, ["hg-canvas", g["left"] + g["tileW"] + 1, g["top"] + g["tileH"] / 2]
    )
    assert gap["at"][3] == 0  # the gap between two heads is left blank
    if width != 1400:
        page.close()


def test_a_click_on_a_thumbnail_picks_that_layer_and_head_every_time(
    browser: Any, server: str
) -> None:
    page = explore(browser, server, 1400)
    assert pickers(page) == ("1", "0")  # the last layer, head 0, outlined
    canvas, g = page.locator(CANVAS), geometry(page)
    canvas.click(position=tile_point(g, 0, 1, 0.5, 0.5))
    page.wait_for_function(enlarged("layer 0 · head 1"), timeout=120_000)
    assert pickers(page) == ("0", "1")
    page.wait_for_timeout(500)
    left, top = tile_point(g, 0, 1, 0, 0).values()  # the outline moved there, a crimson frame
    outside = left - (g["pitch"] - g["tileW"]) / 4  # in the gap, a quarter of it from the tile
    outline = page.evaluate(PIXELS, ["hg-canvas", outside, top + g["tileH"] / 2])
    assert outline["at"] == [220, 20, 60, 255]
    page.get_by_role("combobox", name="Head").click()
    page.keyboard.type("0")
    page.keyboard.press("Enter")
    page.wait_for_function(enlarged("layer 0 · head 0"), timeout=120_000)
    page.wait_for_timeout(500)
    # the same thumbnail again, near a corner: a click is a new event, never a stale selection
    canvas.click(position=tile_point(g, 0, 1, 0.1, 0.9))
    page.wait_for_function(enlarged("layer 0 · head 1"), timeout=120_000)
    canvas.click(position=tile_point(g, 1, 0, 0.9, 0.1))
    page.wait_for_function(enlarged("layer 1 · head 0"), timeout=120_000)
    assert pickers(page) == ("1", "0")
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_hovering_a_cell_names_its_head_tokens_and_weight(desktop: Any) -> None:
    """Cross-attention on "bad": the tiny model writes its own output, so row 0 reads '<s> →'
    its first token, and column 1 is key 1 · a."""
    page = desktop
    page.locator(CANVAS).scroll_into_view_if_needed()
    g = geometry(page)
    row0_col1 = tile_point(g, 1, 1, 1.5 / 4, 0.5 * g["cell"] / g["tileH"])
    page.locator(CANVAS).hover(position=row0_col1)
    tip = page.locator(f"{HOST} .hg-tip")
    tip.wait_for(state="visible", timeout=5_000)
    lines = tip.text_content().split("\n")
    assert lines[0] == "layer 1 · head 1: click to enlarge"
    assert lines[1].startswith("query 0 · <s> → ") and lines[2] == "key 1 · a"
    assert lines[3].startswith("weight ≈ 0.") or lines[3].startswith("weight ≈ 1")


def test_the_lines_view_draws_its_lines_and_names_them_on_hover(desktop: Any) -> None:
    """The tiny model's cross-attention on "bad", layer 1 · head 0 (the page's default): its
    keys b a d </s> written as text at the right; the strongest line, from its payload, named on
    hover halfway along it."""
    page = desktop
    canvas = page.locator(LINES)
    canvas.scroll_into_view_if_needed()
    assert page.locator(f"{HOST} .lv-key").all_text_contents() == ["b", "a", "d", "</s>"]
    px = page.evaluate(PIXELS, ["lv-canvas", 0, 0])
    assert px["drawn"] > 0.02 * px["total"]  # lines, not a blank canvas
    strongest = page.evaluate(STRONGEST)  # (query, key, weight, y at the middle, x middle)
    canvas.hover(position={"x": strongest["x"], "y": strongest["y"]})
    tip = page.locator(f"{HOST} .lv-tip")
    tip.wait_for(state="visible", timeout=5_000)
    lines = tip.text_content().split("\n")
    assert lines[0].startswith(f"query {strongest['query']} · ")
    assert lines[1].startswith(f"→ key {strongest['key']} · ")
    assert lines[2] == f"weight {strongest['weight']}"


STRONGEST = """() => {
  const h = Array.from(document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))
    .find((h) => h.shadowRoot.querySelector('.lv-canvas'));
  const root = h.shadowRoot.querySelector('.lv-root'), s = root.__lines, g = s.geom;
  const q = s.lines.query[0], k = s.lines.key[0];
  return { query: q, key: k, weight: s.lines.weight[0].toPrecision(4),
           x: (g.left + g.right) / 2, y: (g.qy[q] + g.ky[k]) / 2 };
}"""


def label_lightness(page: Any, label: str) -> int:
    """The darkest channel of a label's text colour (high: light text)."""
    colour = page.locator(f"{HOST} {label}").first.evaluate("e => getComputedStyle(e).color")
    return min(int(v) for v in colour[colour.index("(") + 1 : colour.index(")")].split(","))


@pytest.mark.parametrize("how", ["browser", "menu"])
def test_labels_follow_the_dark_theme(
    request: pytest.FixtureRequest, browser: Any, server: str, how: str
) -> None:
    """Dark from the browser's preference (a tab of its own), or picked in the ⋮ menu (no
    rerun of the script: the canvases read Streamlit's theme variables) on the shared page."""
    if how == "browser":
        page = explore(browser, server, 1400, color_scheme="dark")
    else:
        page = request.getfixturevalue("desktop")
    if how == "menu":
        assert label_lightness(page, ".hg-head") < 100  # dark text on the light page
        page.locator("[data-testid='stMainMenu']").click()
        page.locator("[data-testid='stMainMenuItem-theme-Dark']").click()
        page.keyboard.press("Escape")
        page.wait_for_timeout(800)
    for label in (".hg-head", ".hg-layer", ".lv-key", ".lv-query"):
        assert label_lightness(page, label) > 180, label  # light text on the dark page
    assert page.locator(f"{HOST} .hg-head").all_text_contents() == ["head 0", "head 1"]
    assert page.locator(f"{HOST} .hg-layer").all_text_contents() == ["layer 0", "layer 1"]
    if how == "browser":
        page.close()


@pytest.mark.slow
def test_a_500_token_minilm_input_stays_readable_and_the_page_short(
    browser: Any, server: str
) -> None:
    """Explore on minilm with exactly 500 tokens (issue 36: past 256 positions the enlarged
    head is its overview, drawn on a canvas): the head shows its pattern (layer 0 head 2 looks
    at a neighbour: its diagonal blocks dark, the rest light, colour ∝ ∛weight); the grid of
    6 × 12 heads stays a few hundred px tall, its cells pooled (the caption says how); the page
    stays within 4,000 px."""
    require_bundled("minilm")
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "house"]
    rng = random.Random(0)
    text = " ".join(rng.choice(words) for _ in range(498))  # each one token; [CLS], [SEP]
    page = browser.new_page(viewport={"width": 1400, "height": 900})  # the worker's server
    query = f"model=minilm&layer=0&head=2&text={urllib.parse.quote(text)}"
    page.goto(f"{server}/?{query}", timeout=120_000)
    page.wait_for_function(BOTH_DRAWN, timeout=120_000)  # the lines view's is a third
    page.wait_for_timeout(500)  # the page takes its final width
    head = page.locator(f"{HOST} canvas.hz-canvas")
    assert json.loads(head.get_attribute("data-window")) == {"rows": [0, 500], "cols": [0, 500]}
    g = json.loads(head.get_attribute("data-geometry"))
    at = lambda fx, fy: page.evaluate(  # noqa: E731
        PIXELS, ["hz-canvas", g["left"] + fx * g["w"], g["top"] + fy * g["h"]]
    )["at"]
    diagonal, far = at(0.501, 0.501), at(0.9, 0.1)
    assert sum(diagonal[:3]) + 150 < sum(far[:3]), (diagonal, far)  # the pattern shows
    heights = page.evaluate(HEIGHTS)
    overview, grid = (page.evaluate(HOST_HEIGHT, name) for name in ("hz-canvas", "hg-canvas"))
    note = page.locator(f"{HOST} .hg-note").text_content()
    drawn = page.evaluate(PIXELS, ["hg-canvas", 0, 0])["drawn"]
    page.close()
    assert heights["charts"] == [] and grid <= 700 and drawn > 0 and overview <= 1000
    assert "blocks of 9×9 positions" in note and "mean" in note
    # the overview, the grid, the lines view of 256 queries (about 550 px) and the token sets'
    # controls: the page stays a few screens, not one row a token
    assert heights["page"] < 4000, json.dumps(heights)
