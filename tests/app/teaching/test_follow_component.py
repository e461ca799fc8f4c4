"""The follow component in a real browser, alone: it asks for a rerun when its class's version
file changes, and asks again, with a value Streamlit has not seen, while no redraw brings the
new version (a rerun lost to a fragment run left a student on the old slide in a class of 10
to 20 under load); it stops asking once the page is drawn with that version."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from attnlens.app.teaching.board import FOLLOW_HTML, RETRY_MS
from helpers.server import CHROMIUM_ARGS

pytestmark = [pytest.mark.browser]
CHROMIUM = shutil.which("chromium")
ORIGIN = "http://follow.test"
CODE = "ABC123"
POLL_MS = 50

# The page plays Streamlit: it keeps every message the component sends (the component is the
# top window here, so it posts to itself) and can draw the component with a version.
HARNESS = """() => {
  window.sent = [];
  window.addEventListener("message", (e) => {
    if (e.data && e.data.type === "streamlit:setComponentValue") window.sent.push(e.data.value);
  });
}"""


def render(page: Any, version: int) -> None:
    args = {"code": CODE, "version": version, "every_ms": POLL_MS}
    page.evaluate("(args) => window.postMessage({type: 'streamlit:render', args: args}, '*')", args)


@pytest.fixture
def page() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    versions = {"now": 1}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page()
        html = {"body": FOLLOW_HTML, "content_type": "text/html"}
        tab.route(f"{ORIGIN}/index.html", lambda r: r.fulfill(**html))
        tab.route(
            f"{ORIGIN}/{CODE}.json*",
            lambda r: r.fulfill(
                status=404 if versions["now"] is None else 200,
                body=json.dumps({"version": versions["now"]}),
            ),
        )
        tab.goto(f"{ORIGIN}/index.html")
        tab.evaluate(HARNESS)
        tab.versions = versions
        yield tab
        browser.close()


def test_it_asks_again_until_a_redraw_brings_the_version(page: Any) -> None:
    render(page, 1)
    page.wait_for_timeout(5 * POLL_MS)
    assert page.evaluate("window.sent") == [], "the page shows the class's version: no rerun"
    page.versions["now"] = 2  # the teacher moves
    page.wait_for_function("window.sent.length === 1", timeout=5_000)
    page.wait_for_timeout(RETRY_MS // 2)
    assert len(page.evaluate("window.sent")) == 1, "one rerun asked, not one per poll"
    page.wait_for_function("window.sent.length === 2", timeout=RETRY_MS * 3)  # that rerun lost
    first, again = page.evaluate("window.sent")
    assert first[0] == again[0] == 2 and first != again  # a value Streamlit has not seen
    render(page, 2)  # the page is drawn with the new version
    settled = len(page.evaluate("window.sent"))
    page.wait_for_timeout(RETRY_MS + 10 * POLL_MS)
    assert len(page.evaluate("window.sent")) == settled


def test_a_class_this_server_does_not_read_asks_for_a_rerun_now_and_then(page: Any) -> None:
    """No file for the class (the server restarted, or forgot a class nobody asked about): the
    page reruns, which has the server read the class again; once per RETRY_MS, not per poll."""
    page.versions["now"] = None
    render(page, 1)
    page.wait_for_function("window.sent.length === 1", timeout=5_000)
    assert page.evaluate("window.sent")[0][0] == "unread"
    page.wait_for_timeout(RETRY_MS // 2)
    assert len(page.evaluate("window.sent")) == 1
    page.versions["now"] = 1  # read again, the version the page shows: nothing more to ask
    page.wait_for_timeout(RETRY_MS + 10 * POLL_MS)
    assert len(page.evaluate("window.sent")) == 1
