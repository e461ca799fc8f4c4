"""The Lecture on a 1920×1080 projector, in a real browser (issue 37): every slide's figure text at
the presentation size, nothing over another text, no Plotly toolbar, the heads slide's query
labels left of its panels; and a class's join link that copies as the URL it says (no invisible
characters), whose QR code opens beside the question, never over it."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import figure_checks as check
from helpers.apptest import require_bundled
from helpers.browser import settle
from helpers.lecture_page import shows, start_class

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # handed out first (tests/conftest.py)
PROJECTOR = {"width": 1920, "height": 1080}
TEXT_PX = 23.5  # 24 px, less rounding in the browser's measure
SLIDES = 14
INVISIBLE = ("\u2060", "\u200b", "\u200c", "\u200d", "\ufeff", "\u00ad")
# Each subplot's plot area (Plotly's drag rectangle), and the y tick labels: page coordinates
PANELS = """() => [...document.querySelectorAll('.js-plotly-plot .draglayer .nsewdrag')]
  .map(r => { const b = r.getBoundingClientRect(); return [b.left, b.right]; })"""
Y_LABELS = """() => [...document.querySelectorAll('.js-plotly-plot .ytick text')]
  .filter(t => t.textContent).map(t => t.getBoundingClientRect().right)"""
FIGURE_OF_THIS_RUN = """() => !!document.querySelector('.js-plotly-plot .main-svg')
  && !document.querySelector("[data-testid='stElementContainer'][data-stale='true']")"""
# Tick labels drawn over a plot area (a panel's cells): the padding slide's second sentence named
# its rows over the first sentence's cells
OVER_PANELS = """() => {
  const rects = [...document.querySelectorAll('.js-plotly-plot .draglayer .nsewdrag')]
    .map(r => r.getBoundingClientRect());
  const ticks = '.js-plotly-plot .xaxislayer-above text, .js-plotly-plot .yaxislayer-above text';
  return [...document.querySelectorAll(ticks)]  // every axis's, "y2tick" and on too
    .filter(t => t.textContent).map(t => [t.textContent, t.getBoundingClientRect()])
    .filter(([, b]) => rects.some(r => b.left < r.right - 1 && b.right > r.left + 1
      && b.top < r.bottom - 1 && b.bottom > r.top + 1)).map(([text]) => text);
}"""
TOOLBARS = """() => [...document.querySelectorAll('.modebar')]
  .filter(m => getComputedStyle(m).display !== 'none').length"""


@pytest.fixture(autouse=True)
def _deck_model() -> None:
    """The deck's model, translate, which the lecture opens on the worker's shared server
    (tests/app/conftest.py: its class store is the session's temporary one)."""
    require_bundled("translate")


def drawn(page: Any, n: int) -> None:
    """Wait until the page shows slide n with its own figure drawn (the slide before's
    elements, stale while the script reruns, gone) and nothing changing."""
    page.wait_for_function(shows(n), timeout=180_000)
    page.wait_for_function(FIGURE_OF_THIS_RUN, timeout=180_000)  # built, then drawn
    settle(page, 1500, 180_000)


def test_every_slide_reads_from_the_back_row(browser: Any, server: str) -> None:
    """One page walks the deck with its own Next button, as a presenter does (a page load per
    slide cost more than the checks)."""
    page = browser.new_page(viewport=PROJECTOR)
    page.goto(f"{server}/?page=lecture&deck=section3&slide=1&present=1", timeout=180_000)
    for n in range(1, SLIDES + 1):
        if n > 1:
            page.get_by_role("button", name="Next ▶").click(timeout=60_000)
        drawn(page, n)
        assert f"slide={n}" in page.url and "present=1" in page.url, page.url
        found = check.texts(page)
        assert found, f"slide {n}: no figure text"
        assert not check.small(found, TEXT_PX), f"slide {n}"
        assert not check.overlapping(found), f"slide {n}"
        assert page.evaluate(TOOLBARS) == 0, f"slide {n}: Plotly's toolbar"
        assert not page.evaluate(OVER_PANELS), f"slide {n}: labels over a panel"
        sub = page.locator("[data-testid='stCaptionContainer']").first
        assert sub.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= TEXT_PX
        if n == 6:  # Many heads: the queries named left of the first panel, over no cells
            panels = page.evaluate(PANELS)
            assert len(panels) >= 4
            first = min(left for left, _ in panels)
            assert all(right <= first + 1 for right in page.evaluate(Y_LABELS))
    page.close()


def test_the_join_link_copies_whole_and_its_qr_code_leaves_the_question(
    browser: Any, server: str
) -> None:
    teacher, code = start_class(browser, server, 4)  # slide 4 asks a question
    # the class bar drawn (a class's page is never quiet for long: it polls and counts)
    teacher.wait_for_function(
        f"() => document.querySelector('.st-key-lec_join_link')?.innerText.trim()"
        f".endsWith('/?class={code}')",
        timeout=120_000,
    )
    teacher.get_by_role("button", name="Reveal the answers").wait_for(timeout=120_000)
    link = teacher.locator(".st-key-lec_join_link").inner_text().strip()
    assert link.endswith(f"/?class={code}") and link.startswith("http://")
    assert not [c for c in INVISIBLE if c in link]
    if teacher.locator(".st-key-lec_join_warning").count():  # a machine with no network
        assert "no network address" in teacher.locator(".st-key-lec_join_warning").inner_text()
    else:
        assert "127.0.0.1" not in link and "localhost" not in link
    question = steady_box(teacher.get_by_role("button", name="Reveal the answers"))
    teacher.get_by_role("button", name="QR code").click()
    teacher.wait_for_selector("[data-testid='stPopoverBody'] img", timeout=30_000)
    qr = steady_box(teacher.locator("[data-testid='stPopoverBody']"))
    words = teacher.get_by_text("Predict, then reveal").bounding_box()
    for box in (question, words):
        assert qr["x"] + qr["width"] <= box["x"] or qr["y"] + qr["height"] <= box["y"]
    assert not [c for c in INVISIBLE if c in teacher.locator(".st-key-lec_qr_link").inner_text()]
    teacher.close()


def steady_box(element: Any, tries: int = 60) -> Any:
    """The element's box once two reads 250 ms apart agree (a popover or a rerun may still be
    placing it): a class's page is never quiet long enough to wait for the whole page."""
    box = element.bounding_box()
    for _ in range(tries):
        element.page.wait_for_timeout(250)
        again = element.bounding_box()
        if again == box and box is not None:
            return box
        box = again
    raise AssertionError(f"the element kept moving: last at {box}")
