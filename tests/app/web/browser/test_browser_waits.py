"""A wait says what runs and how far it is, in place of the last input's page (app/web/waits.py;
issue 49: a long input showed the previous result greyed out, its old continuation too, for
half a minute, as if it were the answer to the new input)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attnlens.app.cli.serve import STREAMLIT_OPTIONS
from helpers.browser import settle
from helpers.server import free_port, running

pytestmark = [pytest.mark.browser]
PAGE = Path(__file__).resolve().parents[3] / "helpers" / "wait_page.py"
WAIT_S = 3.0  # seconds each new text takes on that page (its own WAIT_S)
OLD_SHOWN = """() => [...document.querySelectorAll('.js-plotly-plot, [data-testid=stMarkdown]')]
  .filter(e => e.offsetParent !== null && e.innerText.includes('result first')).length"""
LINE = """() => (document.querySelector('[data-testid=stAlert], [data-testid=stProgress]')
  || {}).innerText || ''"""


@pytest.fixture(scope="module")
def wait_page() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(PAGE), "--server.port", str(port)]
    with running([*command, *STREAMLIT_OPTIONS], port) as url:
        yield url


def enter(page: Any, text: str) -> float:
    box = page.get_by_role("textbox", name="Text")
    box.fill(text)
    box.press("Enter")
    return time.monotonic()


def test_the_last_result_goes_and_the_wait_says_what_runs_and_how_far(
    browser: Any, wait_page: str
) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(wait_page, timeout=60_000)
    first = "() => ({LINE})().includes('Reading 5 tokens with slow')".replace("{LINE}", LINE)
    page.wait_for_function(first, timeout=60_000, polling=100)
    assert " s so far" in page.evaluate(LINE)  # the first such work: no estimate yet
    page.get_by_text("result for first").wait_for(timeout=90_000)
    settle(page)
    entered = enter(page, "second")
    about = "() => /Reading 6 tokens with slow.*of about \\d+ s/.test(({LINE})())"
    page.wait_for_function(about.replace("{LINE}", LINE), timeout=30_000, polling=100)
    assert time.monotonic() - entered < WAIT_S, "the line came while the work ran"
    assert page.evaluate(OLD_SHOWN) == 0, "the last input's result is off the page"
    assert page.locator("[data-testid=stProgress]").count() == 1  # a bar of the share done
    page.get_by_text("result for second").wait_for(timeout=60_000)
    assert page.evaluate(LINE) == "" and page.evaluate(OLD_SHOWN) == 0
    page.close()
