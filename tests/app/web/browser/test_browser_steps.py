"""Decode's step-through in Chromium (app/web/decode/step_view.py, static/step_view.js): the step
moves in the page at once, however fast the keys come, and the server's redraw for it (table, tree,
URL) follows without pulling it back; ◀ / ▶ stop at the ends; the hover names a key and its weight;
every text reads, light at 1400 px and dark on a projector, where it is projector-sized."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import figure_checks as check
from helpers.browser import settle

pytestmark = pytest.mark.browser
QUERY = "page=decode&text=bad%20cafe&strategy=beam&beam_size=3&max_len=6"
ROOT = ".ds-root[data-drawn]"  # Playwright's CSS reaches into the component's shadow root
TEXTS = """() => {
  const root = Array.from(document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))
    .map((h) => h.shadowRoot && h.shadowRoot.querySelector('.ds-root')).find(Boolean);
  const out = [];
  const walk = (e) => { for (const c of e.children) walk(c);
    const own = Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    const box = e.getBoundingClientRect();
    if (own && box.width > 0) { const s = getComputedStyle(e);
      out.push({ text: e.textContent.trim(), size: parseFloat(s.fontSize), color: s.color }); } };
  walk(root);
  return out;
}"""
TREE = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .find((p) => p.layout.title.text.includes('up to step'))"""
NODE_AT = f"""(step) => {{  // where a kept node of that step is drawn
  const plot = ({TREE})(), L = plot._fullLayout;
  const t = plot.data.find((t) => t.customdata && t.x.includes(step)), i = t.x.indexOf(step);
  const box = plot.querySelector('.main-svg').getBoundingClientRect();
  return {{ x: box.left + L.xaxis._offset + L.xaxis.l2p(t.x[i]),
            y: box.top + L.yaxis._offset + L.yaxis.l2p(t.y[i]) }};
}}"""
BACKGROUND = """() => { let e = document.querySelector('[data-testid=stMain]');
  for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
    if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c; }
  return 'rgb(255, 255, 255)'; }"""


def decode(browser: Any, url: str, query: str = QUERY, **options: Any) -> Any:
    page = browser.new_page(**{"viewport": {"width": 1400, "height": 1000}, **options})
    page.goto(f"{url}/?{query}", timeout=120_000)
    page.locator(ROOT).wait_for(timeout=120_000)
    settle(page)
    return page


def shown_step(page: Any) -> int:
    return int(page.locator(ROOT).get_attribute("data-step"))


def test_the_step_moves_at_once_and_the_server_follows_without_pulling_it_back(
    browser: Any, server: str
) -> None:
    page = decode(browser, server, QUERY.replace("beam", "greedy"))  # ends at max_len only
    slider = page.get_by_role("slider", name="Step")
    last = int(slider.get_attribute("max"))
    assert last >= 4 and shown_step(page) == 0
    assert page.get_by_role("button", name="◀ previous").is_disabled()
    slider.focus()
    for _ in range(4):  # faster than the server's reruns: each one is for an older step
        page.keyboard.press("ArrowRight")
    assert shown_step(page) == 4  # drawn by the page itself, with no rerun waited for
    title = page.locator(".ds-cands .ds-title").text_content()
    assert title.startswith("step 4 · candidates of live beam")
    page.wait_for_function("() => location.search.includes('step=4')", timeout=90_000)
    settle(page)
    tree_title = page.evaluate(f"({TREE})().layout.title.text")
    assert shown_step(page) == 4 and "up to step 4" in tree_title
    page.get_by_role("button", name="◀ previous").click()
    assert shown_step(page) == 3
    page.wait_for_function("() => location.search.includes('step=3')", timeout=90_000)
    slider.press("End")
    assert shown_step(page) == last and page.get_by_role("button", name="next ▶").is_disabled()
    assert page.locator("[data-testid='stException']").count() == 0
    page.get_by_role("button", name="◀ previous").click()  # a step with figures: its hover
    page.locator(".ds-panel").first.locator(".ds-col").nth(1).hover()
    tip = page.locator(".ds-tip")
    tip.wait_for(state="visible", timeout=5_000)
    key, weight = tip.text_content().split("\n")
    assert key == "key 1 · a" and weight.startswith("weight ")
    assert 0 <= float(weight.removeprefix("weight ")) <= 1
    readable(page)
    # the server moves the step (a click in the tree, two steps back), then the page moves to
    # the step it last reported: Streamlit passed on no value equal to the last one sent
    page.evaluate(f"({TREE})().scrollIntoView()")
    page.wait_for_timeout(500)
    node = page.evaluate(NODE_AT, last - 2)
    page.mouse.click(node["x"], node["y"])
    page.wait_for_function(f"() => location.search.includes('step={last - 2}&')", timeout=90_000)
    page.locator(f".ds-root[data-step='{last - 2}']").wait_for(timeout=90_000)
    page.get_by_role("button", name="next ▶").click()
    page.wait_for_function(f"() => location.search.includes('step={last - 1}&')", timeout=90_000)
    page.close()


def test_the_step_reads_on_a_projector_in_the_dark(browser: Any, server: str) -> None:
    page = decode(
        browser, server, f"{QUERY}&present=1", viewport={"width": 1920, "height": 1080},
        color_scheme="dark",
    )  # fmt: skip
    found = readable(page)
    assert any(t["text"].startswith("step 0 · candidates") for t in found)
    assert not [t for t in found if t["size"] < 20], "every text projector-sized"
    page.close()


def readable(page: Any) -> list[dict[str, Any]]:
    """The step-through's texts, each checked to read against the page (WCAG's 4.5)."""
    found = page.evaluate(TEXTS)
    back = rgb(page.evaluate(BACKGROUND))
    for t in found:
        assert check.contrast(rgb(t["color"]), back) >= 4.5, t
    return list(found)


def rgb(css: str) -> list[float]:
    """The channels (0–255) of a computed CSS colour, "rgb(…)" or "rgba(…)"."""
    return [float(v) for v in css[css.index("(") + 1 : -1].split(",")[:3]]
