"""Explore on a long input in Chromium (issue 36), on a GPT-2-shaped model with random weights
built here, its record kept as scores (the budget set below the weights): the overview drawn,
a box dragged on it zooming to exact cells whose hover gives the record's weights, another head
sent as one head's window (bytes counted on the websocket), "Whole head" going back out."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import attnlens
from helpers.browser import settle
from helpers.long_gpt2 import words
from helpers.server import serving

pytestmark = pytest.mark.browser
N = 400
CANVAS = "canvas.hz-canvas"  # Playwright's CSS reaches into the component's shadow root
BUDGET = {"ATTNLENS_MAX_RECORD_MB": "1"}  # 2 × 2 heads × 401² weights: 2.5 MB
WINDOW = """() => {
  for (const h of document.querySelectorAll('[data-testid=stBidiComponentIsolated]')) {
    const c = h.shadowRoot && h.shadowRoot.querySelector('canvas.hz-canvas[data-drawn]');
    if (c) return c.dataset.window;
  }
  return null;
}"""


@pytest.fixture(scope="module")
def long_server(long_gpt2_dir: Path) -> Iterator[str]:
    with serving(str(long_gpt2_dir), env=BUDGET) as url:
        yield url


def window(page: Any) -> dict[str, list[int]]:
    return dict(json.loads(page.evaluate(WINDOW)))


def wait_window(page: Any, rows: list[int]) -> None:
    wanted = f"{rows[0]},{rows[1]}"
    page.wait_for_function(
        f"() => {{ const w = ({WINDOW})(); "
        f"return !!w && JSON.parse(w).rows.join() === '{wanted}'; }}",
        timeout=90_000,
    )


def plot_point(page: Any, fx: float, fy: float) -> tuple[float, float]:
    """A point fx across and fy down the cells, in page px."""
    canvas = page.locator(CANVAS)
    box = canvas.bounding_box()
    g = json.loads(canvas.get_attribute("data-geometry"))
    return box["x"] + g["left"] + fx * g["w"], box["y"] + g["top"] + fy * g["h"]


def hovered_weight(page: Any, row: int, col: int, shape: tuple[int, int]) -> float:
    """The weight the hover box gives for cell (row, col) of a window of `shape` cells."""
    page.mouse.move(*plot_point(page, (col + 0.5) / shape[1], (row + 0.5) / shape[0]))
    tip = page.locator(".hz-tip")
    tip.wait_for(state="visible", timeout=30_000)
    found = re.search(r"weight (\d\.\d{4})$", tip.text_content())
    assert found, tip.text_content()
    return float(found.group(1))


def test_overview_zoom_exact_cells_head_switch_and_back(
    browser: Any, long_server: str, long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    received: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(len(f))))
    page.goto(f"{long_server}/?page=explore&text={quote(words(N))}", timeout=120_000)
    page.wait_for_function(f"() => ({WINDOW})() !== null", timeout=120_000)
    settle(page)
    assert window(page) == {"rows": [0, N + 1], "cols": [0, N + 1]}
    page.locator(CANVAS).scroll_into_view_if_needed()

    # a box over queries ~40%–70% down and keys ~10%–45% across: under 256 a side, exact
    page.mouse.move(*plot_point(page, 0.10, 0.40))
    page.mouse.down()
    page.mouse.move(*plot_point(page, 0.45, 0.70), steps=8)
    page.mouse.up()
    page.wait_for_function(f"() => JSON.parse(({WINDOW})()).rows[0] > 0", timeout=90_000)
    settle(page)
    zoomed = window(page)
    (r0, r1), (c0, c1) = zoomed["rows"], zoomed["cols"]
    assert 100 < r1 - r0 <= 256 and 100 < c1 - c0 <= 256
    assert r0 % 4 == 0 and c0 % 4 == 0  # whole overview blocks

    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")
    truth = attnlens.load(str(long_gpt2_dir)).trace(words(N), record="scores")
    head = truth.head("decoder_self", 1, 0, slice(r0, r1), slice(c0, c1))
    shape = (r1 - r0, c1 - c0)
    for row, col in ((shape[0] - 1, 0), (shape[0] // 2, shape[1] // 3), (shape[0] - 1, 5)):
        assert r0 + row >= c0 + col  # an allowed cell of the causal map
        assert hovered_weight(page, row, col, shape) == pytest.approx(head[row, col], abs=6e-5)
    labels = page.locator(".hz-row").all_text_contents()
    assert labels[0] == f"{r0} · {truth.shown('decoder_self')[0][r0]}"  # tokens as they fit

    received.clear()
    page.get_by_role("combobox", name="Head").click()
    page.get_by_role("option", name="1", exact=True).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].some(h =>"
        " h.shadowRoot && (h.shadowRoot.querySelector('.hz-title')||{}).textContent"
        " === 'decoder self-attention · layer 1 · head 1')",
        timeout=90_000,
    )
    settle(page)
    assert window(page) == zoomed  # the same window of the other head
    assert sum(received) < 300_000, sum(received)
    other = truth.head("decoder_self", 1, 1, slice(r0, r1), slice(c0, c1))
    assert hovered_weight(page, shape[0] - 1, 0, shape) == pytest.approx(other[-1, 0], abs=6e-5)

    page.get_by_role("button", name="Whole head").click()
    wait_window(page, [0, N + 1])

    # a token set shown: a head picked above (its own fragment) reruns the page once, so the
    # set's profile below names that head
    tokens = page.get_by_role("textbox", name="Tokens")
    tokens.fill("w7")
    tokens.press("Enter")
    page.wait_for_function(PLOT_TITLED, arg="layer 1 · head 1: mean weight", timeout=90_000)
    settle(page)
    picker = page.get_by_role("combobox", name="Head")
    picker.click()
    picker.press("ArrowUp")  # head 1 is held: the option above it
    picker.press("Enter")
    page.wait_for_function(PLOT_TITLED, arg="layer 1 · head 0: mean weight", timeout=90_000)
    page.close()


PLOT_TITLED = """(text) => [...document.querySelectorAll('.js-plotly-plot')].some(p =>
  p.layout && p.layout.title && String(p.layout.title.text).includes(text))"""


def test_a_short_input_keeps_the_plotly_heatmap(browser: Any, long_server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{long_server}/?page=explore&text={quote(words(30))}", timeout=120_000)
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    settle(page)
    assert page.evaluate(WINDOW) is None
    bar = page.evaluate(
        "() => document.querySelector('.js-plotly-plot').data[0].colorbar.title.text"
    )
    assert bar == "weight (colour ∝ ∛weight)"
    page.close()


def test_decodes_step_attention_over_hundreds_of_keys_is_drawn_not_blank(
    browser: Any, long_server: str
) -> None:
    """The new position's weights over 500 keys and more are each about 1 / 500: the panel's
    scale ends just above the largest (not at 1) and every column keeps a width (2 px gaps
    between 500 columns took all of it). 500 words and 16 steps leave room for a run the budget
    takes (each step keeps its rows and its keys' norms: 1.8 MB at the page's default length)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{long_server}/?page=decode&max_len=16&text={quote(words(500))}", timeout=120_000)
    page.locator(".ds-panel").first.wait_for(timeout=180_000)
    settle(page)
    panel = page.locator(".ds-panel").first
    top = float(panel.locator(".ds-scale span").first.text_content() or "nan")
    assert 0 < top <= 0.05, top  # a round number above ~1/500, not 1
    bars = panel.locator(".ds-bar").evaluate_all(
        "(bars) => bars.map((b) => [b.getBoundingClientRect().width, b.offsetHeight])"
    )
    assert len(bars) > 500
    assert sum(w > 0 for w, _ in bars) > 0.9 * len(bars)  # columns that keep a width
    assert sum(h > 0 for _, h in bars) > 0.9 * len(bars)  # and bars that show
    page.close()
