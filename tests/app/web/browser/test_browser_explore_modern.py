"""Explore's marks of modern attention in Chromium (issue 36), on a Mistral shape built here with
random weights (4 query heads over 2 key/value heads, a sliding window on every layer; tests/
helpers/long_modern.py) and a 400-word input: the every-head grid draws a frame and a "kv n:
q a–b" label round each group of query heads, and the enlarged head draws the window's two
edges, counted in the canvases' own pixels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import explore_on, settle
from helpers.long_gpt2 import words
from helpers.long_modern import WINDOW, long_modern

pytestmark = pytest.mark.browser
N = 400
# the component's canvas (inside its shadow root) of a class, and pixels of a colour in it
PIXELS = """([cls, rgb, tol]) => {
  for (const h of document.querySelectorAll('[data-testid=stBidiComponentIsolated]')) {
    const c = h.shadowRoot && h.shadowRoot.querySelector('canvas.' + cls + '[data-drawn]');
    if (!c) continue;
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4)
      if (px[i + 3] > 150 && Math.abs(px[i] - rgb[0]) <= tol && Math.abs(px[i + 1] - rgb[1]) <= tol
          && Math.abs(px[i + 2] - rgb[2]) <= tol) n++;
    return {n, dataset: {...c.dataset}};
  }
  return null;
}"""


@pytest.fixture(scope="module")
def mistral(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return long_modern("mistral", tmp_path_factory.mktemp("mistral"))


def test_grouped_heads_and_the_window_band_are_drawn(
    browser: Any, server: str, mistral: Path
) -> None:
    page = explore_on(browser, server, mistral, words(N))
    page.wait_for_function(
        f"() => ({PIXELS})(['hz-canvas', [0, 0, 0], 0]) !== null"
        f" && ({PIXELS})(['hg-canvas', [0, 0, 0], 0]) !== null",
        timeout=120_000,
    )
    settle(page)
    band = page.evaluate(PIXELS, ["hz-canvas", [255, 127, 14], 40])  # head_zoom.js's BAND
    assert json.loads(band["dataset"]["marks"]) == {"band": 2, "window": WINDOW, "sink": False}
    assert band["n"] > 100  # the two dashed edges across the head
    caption = page.locator(".hz-caption").text_content()
    assert f"sliding window of {WINDOW} keys" in caption and "rotary positions" in caption

    frames = page.evaluate(PIXELS, ["hg-canvas", [128, 128, 128], 10])  # GROUP_FRAME
    assert json.loads(frames["dataset"]["geometry"])["group"] == 2
    assert frames["n"] > 200  # two frames round every layer's thumbnails
    groups = page.locator(".hg-group").all_text_contents()
    assert groups == ["kv 0: q 0–1", "kv 1: q 2–3"]

    # zoomed to a window of at most 256 queries, the lines view draws that window's queries
    canvas = page.locator("canvas.hz-canvas")
    canvas.scroll_into_view_if_needed()
    box, g = canvas.bounding_box(), json.loads(canvas.get_attribute("data-geometry"))
    at = lambda fx, fy: (box["x"] + g["left"] + fx * g["w"], box["y"] + g["top"] + fy * g["h"])  # noqa: E731
    page.mouse.move(*at(0.3, 0.5))
    page.mouse.down()
    page.mouse.move(*at(0.6, 0.8), steps=8)
    page.mouse.up()
    page.wait_for_function(
        "() => /queries 2\\d\\d–3\\d\\d,/.test(document.querySelector('[data-testid=stMain]')"
        " && [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]"
        ".map(h => h.shadowRoot && (h.shadowRoot.querySelector('.lv-title') || {}).textContent)"
        ".join(' '))",
        timeout=90_000,
    )
    zoomed = json.loads(
        page.evaluate(f"() => ({PIXELS})(['hz-canvas', [0, 0, 0], 0])")["dataset"]["window"]
    )
    title = page.locator(".lv-title").text_content()
    assert f"queries {zoomed['rows'][0]}–{zoomed['rows'][1] - 1}," in title
    page.close()
