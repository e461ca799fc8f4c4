"""Explore in presentation mode at 1920×1080 (issue 49): its heatmap was short (a plot 260 px
tall in a 680 px figure, the margins doubled with the text), its colour bar's ticks 0.01,
0.001 and 0 ran into one another, and the Text box sat at the sidebar's foot, below the fold."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from helpers.apptest import require_bundled
from helpers.browser import settle

pytestmark = [pytest.mark.browser]
PROJECTOR = {"width": 1920, "height": 1080}
PLOT = """() => { const p = document.querySelector('.js-plotly-plot'); const L = p._fullLayout;
  return {height: L._size.h, ticks: [...p.querySelectorAll('.colorbar .cbaxis text, .cbaxis text')]
    .map((t) => { const b = t.getBoundingClientRect(); return [t.textContent, b.top, b.bottom]; })
  }; }"""


def test_explore_on_a_projector_has_a_tall_heatmap_ticks_apart_and_its_text_box_in_sight(
    browser: Any, server: str
) -> None:
    require_bundled("reverse")
    page = browser.new_page(viewport=PROJECTOR)
    page.goto(f"{server}/?page=explore&model=reverse&kind=cross&present=1", timeout=90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)
    settle(page, timeout=90_000)
    drawn = page.evaluate(PLOT)
    assert drawn["height"] >= 300, f"the heatmap's plot is {drawn['height']} px tall"
    ticks = sorted(drawn["ticks"], key=lambda t: t[1])
    assert len(ticks) >= 4
    touching = [(a[0], b[0]) for a, b in itertools.pairwise(ticks) if b[1] < a[2]]
    assert not touching, f"colour bar ticks on one another: {touching}"
    box = page.locator("[data-testid=stSidebar]").get_by_role("textbox", name="Text")
    where = box.bounding_box()
    assert where is not None and where["y"] + where["height"] <= PROJECTOR["height"], where
    page.close()
