"""A class started on a server that listens on 127.0.0.1 only, on a 1920×1080 projector (issue
49: the warning that no student can open the link, with its command, pushed Previous and Next
below the fold). Its first sentence stays in sight, the rest and the command a click away."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from helpers.apptest import require_bundled
from helpers.browser import choose_theme, keep, settle
from helpers.lecture_page import shows
from helpers.server import free_port, running, serve_command

pytestmark = [pytest.mark.browser]
SLIDES = (3, 4)  # a figure and no question; a figure and a question with its options


@pytest.fixture(scope="module")
def loopback_server() -> Iterator[str]:
    require_bundled("translate")
    port = free_port()
    with running([*serve_command("translate", port), "--host", "127.0.0.1"], port) as url:
        yield url


@pytest.mark.parametrize("slide", SLIDES)
def test_the_loopback_warning_leaves_previous_and_next_in_sight(
    browser: Any, loopback_server: str, slide: int
) -> None:
    """Issue 49's second walk: on a question slide the warning still pushed them out."""
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(f"{loopback_server}/?page=lecture&deck=section3&slide={slide}", timeout=90_000)
    page.wait_for_function(shows(slide), timeout=120_000)
    page.get_by_role("button", name="Start a class").click()
    warning = page.locator(".st-key-lec_join_warning")
    warning.wait_for(timeout=60_000)
    settle(page, timeout=120_000)
    keep(page, f"loopback-slide{slide}-1920.png")
    assert "listens on 127.0.0.1 only" in warning.inner_text()
    for name in ("Previous", "Next"):
        box = page.get_by_role("button", name=name).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 1080, (name, box)
    bar = page.locator("[data-testid='stLayoutWrapper']:has(> .st-key-lec_nav)")
    for theme in ("Dark", "Light"):  # the bar hides what scrolls under it, in either theme
        choose_theme(page, theme)
        keep(page, f"loopback-slide{slide}-1920-{theme}.png")
        assert bar.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
    page.get_by_text("How to let students join").click()
    page.get_by_text("attnlens serve --host 0.0.0.0").wait_for(timeout=30_000)
    page.close()


def test_the_class_settings_are_in_the_projector_s_type(browser: Any, loopback_server: str) -> None:
    """Issue 49's second walk: the Class popover's numbers and labels kept the browser's 14 px
    on a 1920 px projector, where the page around them reads 23 px and more."""
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(f"{loopback_server}/?page=lecture&deck=section3&slide=3", timeout=90_000)
    page.wait_for_function(shows(3), timeout=120_000)
    page.get_by_role("button", name="Start a class").click()
    page.locator(".st-key-lec_join_warning").wait_for(timeout=60_000)
    settle(page, timeout=120_000)
    page.get_by_role("button", name="Class").first.click()
    body = page.locator("[data-testid='stPopoverBody']")
    body.get_by_text("Students at most").wait_for(timeout=30_000)
    keep(page, "class-popover-1920.png")
    size = "e => parseFloat(getComputedStyle(e).fontSize)"
    assert body.locator("input").first.evaluate(size) >= 20
    assert body.get_by_text("Students at most").evaluate(size) >= 20
    page.close()
