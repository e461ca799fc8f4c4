"""Explore and the Lecture's slides on a phone (issue 49: at 390 px Explore's heatmap was a
~90 px strip whose title was cut; a slide's panel titles printed over one another, the colour
bar wider than the plots). At 360 and 390 px, light and dark: no text overlaps another or is
cut at a figure's edge, and every plot, Plotly's or the page's own canvas, is at least 250 px
wide (viz/shared/narrow.py). ATTNLENS_SCREENSHOTS=DIR keeps the screenshots."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from helpers import figure_checks as check
from helpers.apptest import require_bundled
from helpers.browser import choose_theme, keep, settle

pytestmark = [pytest.mark.browser]
PHONES = (360, 390)
LEAST_PLOT_PX = 250
# the width of every Plotly plot area, and of every figure the page draws on a canvas
WIDTHS = """() => [
  ...[...document.querySelectorAll('.js-plotly-plot')].flatMap((p) =>
    Object.values(p._fullLayout._plots).map((s) => ['plotly ' + (p.layout.title.text || ''),
      Math.round(s.xaxis._length)])),
  ...[...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].flatMap((h) =>
    [...(h.shadowRoot ? h.shadowRoot.querySelectorAll('canvas') : [])]
      .filter((c) => c.offsetParent !== null)
      .map((c) => ['canvas ' + (c.getAttribute('aria-label') || ''),
        Math.round(c.getBoundingClientRect().width)])),
]"""


# the visible tick labels of the colour bars the page draws itself (every-head grid, long head)
BAR_TICKS = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
  .flatMap((h) => [...(h.shadowRoot ? h.shadowRoot.querySelectorAll('.hg-ticks, .hz-ticks')
    : [])])
  .map((t) => [...t.children].filter((s) => getComputedStyle(s).visibility !== 'hidden')
    .map((s) => { const b = s.getBoundingClientRect();
      return [s.textContent, b.left, b.right]; }))"""


def phone_page(browser: Any, url: str, width: int) -> Any:
    """A phone's tab on url, once the page has said it is narrow and drawn again."""
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(url, timeout=90_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)
    settle(page, quiet_ms=1000, timeout=90_000)  # the second run, laid out for the phone
    assert page.locator("[data-testid='stException']").count() == 0
    return page


def laid_out_for_a_phone(page: Any) -> None:
    found = check.texts(page)
    assert len(found) > 10
    assert not check.overlapping(found), check.overlapping(found)
    assert not check.clipped(found), check.clipped(found)
    assert not check.titles_on_plots(found)
    narrow = [(name, px) for name, px in page.evaluate(WIDTHS) if px < LEAST_PLOT_PX]
    assert not narrow, f"plots under {LEAST_PLOT_PX} px: {narrow}"
    for ticks in page.evaluate(BAR_TICKS):
        touching = [(a[0], b[0]) for a, b in itertools.pairwise(ticks) if b[1] < a[2] + 2]
        assert not touching, f"colour bar labels run into each other: {touching}"


@pytest.mark.parametrize("width", PHONES)
def test_explore_on_a_phone_reflows_its_figures(browser: Any, server: str, width: int) -> None:
    require_bundled("reverse")  # labels as long as a task model's: "13 · H → end"
    page = phone_page(browser, f"{server}/?page=explore&model=reverse&kind=cross", width)
    laid_out_for_a_phone(page)
    keep(page, f"phone-explore-{width}.png", full_page=True)
    choose_theme(page, "Dark")
    laid_out_for_a_phone(page)
    assert not check.unreadable(check.texts(page))
    keep(page, f"phone-explore-{width}-dark.png", full_page=True)
    page.close()


@pytest.mark.parametrize(("slide", "width"), [(2, 390), (4, 390), (6, 390), (4, 360), (6, 360)])
def test_a_slides_figure_on_a_phone_is_stacked_and_readable(
    browser: Any, server: str, slide: int, width: int
) -> None:
    """Figure 1 (2), scaled dot-product attention (4: Q, K, V and the softmax side by side)
    and the four heads (6), at 390 px; the two with row labels beside each plot at 360 px too
    (Plotly's padding beside the labels left them 239 px plots there)."""
    require_bundled("translate")  # the deck's own model
    page = phone_page(browser, f"{server}/?page=lecture&deck=section3&slide={slide}", width)
    laid_out_for_a_phone(page)
    keep(page, f"phone-slide-{slide}-{width}.png", full_page=True)
    page.close()


def test_inside_on_a_phone_stacks_its_panels(browser: Any, server: str) -> None:
    """Inside the Transformer's positional table and masks are panels side by side: on a
    phone they are stacked, each its own colour bar under it, the masks' two-line title
    wrapped (its second line ran off the figure's edge)."""
    require_bundled("reverse")
    page = phone_page(browser, f"{server}/?page=inside&model=reverse&kind=cross", 360)
    laid_out_for_a_phone(page)
    keep(page, "phone-inside-360.png", full_page=True)
    page.close()


STEP_VIEW = """() => {
  const root = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .map((h) => h.shadowRoot).find((r) => r && r.querySelector('.ds-views'));
  if (!root) return null;
  const box = (e) => { const b = e.getBoundingClientRect();
    return [b.left, b.top, b.right, b.bottom]; };
  return {views: [...root.querySelector('.ds-views').children].filter((e) => e.offsetParent)
    .map(box), slider: box(root.querySelector('.ds-slider')), page: innerWidth}; }"""


def test_decodes_step_through_on_a_phone_stacks_its_charts(browser: Any, server: str) -> None:
    """Side by side at 390 px the attention chart was 160 px wide, its keys' labels on one
    another, and the Step slider ran past the page's right edge."""
    require_bundled("lm")
    page = browser.new_page(viewport={"width": 390, "height": 800})
    page.goto(f"{server}/?page=decode&model=lm&strategy=beam", timeout=90_000)
    page.wait_for_function(f"({STEP_VIEW})() !== null", timeout=120_000)
    settle(page, quiet_ms=1000, timeout=90_000)
    shown = page.evaluate(STEP_VIEW)
    candidates, attention = shown["views"][:2]
    assert attention[1] >= candidates[3], shown  # one under the other
    assert attention[2] - attention[0] >= LEAST_PLOT_PX, shown
    assert shown["slider"][2] <= shown["page"], shown
    page.close()
