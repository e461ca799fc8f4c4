"""Explore's token sets in Chromium (issue 36), on a GPT-2-shaped model with random weights built
here: a word typed as a set of queries draws every head's square, the hover over one gives the
number the record gives, and a click on it enlarges that head. A short text, so the page is quick
to load (a long one's record, kept as scores, is checked under AppTest)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import attnlens
from helpers.browser import explore_on, settle
from helpers.long_gpt2 import words

pytestmark = pytest.mark.browser
N = 40
GRID = "the largest mean weight one key gets from them"  # a query set's grid ("1 query: …")
# page px of the square of (layer, head) in the grid chart, from Plotly's own axes
SQUARE_AT = """([title, layer, head]) => {
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const t = gd.querySelector('.gtitle');
    if (!t || !t.textContent.includes(title)) continue;
    const L = gd._fullLayout, box = gd.getBoundingClientRect();
    return [box.left + L._size.l + L.xaxis.l2p(head), box.top + L._size.t + L.yaxis.l2p(layer)];
  }
  return null;
}"""
TITLES = """() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]
  .map(t => t.textContent).join('|')"""


def test_a_word_as_queries_hovered_and_clicked(
    browser: Any, server: str, long_gpt2_dir: Path
) -> None:
    page = explore_on(browser, server, long_gpt2_dir, words(N))
    box = page.get_by_role("textbox", name="Tokens", exact=True)
    box.wait_for(timeout=120_000)
    settle(page)
    box.fill("w7")
    box.press("Enter")
    page.wait_for_function(f"() => ({SQUARE_AT})({[GRID, 0, 1]!r}) !== null", timeout=90_000)
    settle(page)
    page.locator(".js-plotly-plot", has_text=GRID).scroll_into_view_if_needed()
    x, y = page.evaluate(SQUARE_AT, [GRID, 0, 1])
    page.mouse.move(x, y)
    tip = page.locator(".hoverlayer .hovertext")
    tip.wait_for(state="visible", timeout=30_000)
    text = tip.text_content()
    found = re.search(r"layer 0 · head 1looks most at (\d+) · w\d+: (\d\.\d{4})$", text)
    assert found, text

    truth = attnlens.load(str(long_gpt2_dir)).trace(words(N))
    where = [i for i, t in enumerate(truth.tgt_tokens) if t == "w7"]
    mean = np.mean([truth.head("decoder_self", 0, 1, slice(i, i + 1))[0] for i in where], 0)
    assert int(found.group(1)) == int(mean.argmax())
    assert float(found.group(2)) == pytest.approx(mean.max(), abs=6e-5)

    assert "decoder self-attention · layer 1 · head 0" in page.evaluate(TITLES)
    page.mouse.click(x, y)  # the square picks its head for the page: the heatmap follows
    page.wait_for_function(
        f"() => ({TITLES})().includes('decoder self-attention · layer 0 · head 1')",
        timeout=90_000,
    )
