"""Hostile links in a real browser (Chromium through Playwright, against `attnlens serve`):
an encoded surrogate as the text on every page, Markdown shortcodes as the model name."""

from __future__ import annotations

from typing import Any

import pytest

from attnlens.app.web.main import PAGES
from attnlens.app.web.safe_text import WORD_JOINER
from helpers.apptest import require_bundled

pytestmark = pytest.mark.browser
PYTHON_ERRORS = ("Traceback", "TypeError", "UnicodeEncodeError", "surrogates", "IndexError")
SHORTCODES = ":material/warning: :red[x] :streamlit:"


@pytest.fixture(scope="module")
def browser_page(browser: Any, server: str) -> tuple[Any, str]:
    """A tab on the worker's server: every link below names its model."""
    require_bundled("reverse")
    return browser.new_page(viewport={"width": 1200, "height": 900}), server


def settled(page: Any, url: str, query: str, drawn: str = "h1") -> list[str]:
    """Open the app at url?query, wait until `drawn` is on the page and the script has
    finished; the text of every alert."""
    page.goto(f"{url}/?{query}", timeout=120_000)
    page.wait_for_selector(drawn, timeout=120_000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000
    )
    alerts = page.locator("[data-testid=stAlert]")
    return [alerts.nth(i).inner_text() for i in range(alerts.count())]


@pytest.mark.parametrize("name", [url for _, _, url in PAGES])
def test_an_encoded_surrogate_in_the_link_is_text_on_every_page(
    browser_page: tuple[Any, str], name: str
) -> None:
    page, url = browser_page
    # Experiments draws no chart until asked
    drawn = "[data-testid=stSelectbox]" if name == "experiments" else ".js-plotly-plot"
    alerts = settled(page, url, f"page={name}&model=reverse&text=%ED%B3%BF", drawn)
    assert page.locator("[data-testid=stException]").count() == 0
    assert not [a for a in alerts if any(e in a for e in PYTHON_ERRORS)], alerts


def test_shortcodes_in_a_model_name_show_as_typed(browser_page: tuple[Any, str]) -> None:
    page, url = browser_page
    query = "page=explore&model=" + SHORTCODES.replace(" ", "%20").replace("[", "%5B")
    alerts = settled(page, url, query.replace("]", "%5D"), "[data-testid=stAlert]")
    (error,) = [a for a in alerts if "Could not load model" in a]
    assert SHORTCODES in error.replace(WORD_JOINER, "")
    box = page.locator("[data-testid=stAlert]").first
    assert box.locator("[data-testid=stIconMaterial]").count() == 0  # no icon drawn
    assert "👑" not in error and box.locator("img").count() == 0


def test_a_class_sees_the_theme_in_the_menu_but_no_developer_options(
    browser_page: tuple[Any, str],
) -> None:
    page, url = browser_page
    settled(page, url, "page=explore&model=reverse&text=abc", ".js-plotly-plot")
    assert page.get_by_text("Deploy", exact=True).count() == 0
    page.locator("[data-testid=stMainMenu]").click()
    page.locator("[data-testid=stMainMenuItem-theme-Dark]").wait_for(timeout=10_000)
    items = page.locator("[data-testid^=stMainMenuItem-]")
    shown = {items.nth(i).get_attribute("data-testid") for i in range(items.count())}
    assert {f"stMainMenuItem-theme-{t}" for t in ("System", "Light", "Dark")} <= shown
    assert not [i for i in shown if "theme" not in i and "print" not in i and "Screencast" not in i]
    page.keyboard.press("Escape")


@pytest.mark.parametrize("name", ["explore", "decode"])
def test_a_link_with_a_page_path_opens_that_page_with_its_settings(
    browser_page: tuple[Any, str], name: str
) -> None:
    page, url = browser_page
    page.goto(f"{url}/{name}?model=sort&text=3141592653", timeout=120_000)
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000
    )
    nav = page.locator("[data-testid=stSidebarNav] a").all_inner_texts()
    assert nav[:2] == ["Explore", "Decode"], nav  # our navigation, not the files' names
    assert "model=sort" in page.url and "3141592653" in page.url
