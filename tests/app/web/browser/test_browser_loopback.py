"""A class started on a server that listens on 127.0.0.1 only, on a 1920×1080 projector (issue
49: the warning that no student can open the link, with its command, pushed Previous and Next
below the fold). Its first sentence stays in sight, the rest and the command a click away."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from helpers.apptest import require_bundled
from helpers.browser import settle
from helpers.lecture_page import shows
from helpers.server import free_port, running, serve_command

pytestmark = [pytest.mark.browser]
SLIDE = 3  # a slide with a figure and no question


@pytest.fixture(scope="module")
def loopback_server() -> Iterator[str]:
    require_bundled("translate")
    port = free_port()
    with running([*serve_command("translate", port), "--host", "127.0.0.1"], port) as url:
        yield url


def test_the_loopback_warning_leaves_previous_and_next_in_sight(
    browser: Any, loopback_server: str
) -> None:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(f"{loopback_server}/?page=lecture&deck=section3&slide={SLIDE}", timeout=90_000)
    page.wait_for_function(shows(SLIDE), timeout=90_000)
    page.get_by_role("button", name="Start a class").click()
    warning = page.locator(".st-key-lec_join_warning")
    warning.wait_for(timeout=60_000)
    settle(page, timeout=60_000)
    assert "listens on 127.0.0.1 only" in warning.inner_text()
    for name in ("Previous", "Next"):
        box = page.get_by_role("button", name=name).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 1080, (name, box)
    page.get_by_text("How to let students join").click()
    page.get_by_text("attnlens serve --host 0.0.0.0").wait_for(timeout=30_000)
    page.close()
