"""The follow component in a real browser, alone: it waits on the follow route and asks for a
rerun when the route brings a new version, and asks again, with a value Streamlit has not seen,
while no redraw brings the new version (a rerun lost to a fragment run left a student on the
old slide in a class of 10 to 20 under load); it stops asking once the page is drawn with that
version. The route is played here by the test: it holds each request until the test moves the
class, as the server does."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from attnlens.app.teaching.board import FOLLOW_HTML, FOLLOW_PATH, RETRY_MS
from helpers.server import CHROMIUM_ARGS

pytestmark = [pytest.mark.browser]
CHROMIUM = shutil.which("chromium")
ORIGIN = "http://follow.test"
CODE = "ABC123"
STUDENT = "s0-_" * 4  # a student id as the server gives them out

# The page plays Streamlit: it keeps every message the component sends (the component is the
# top window here, so it posts to itself) and can draw the component with a version.
HARNESS = """() => {
  window.sent = [];
  window.addEventListener("message", (e) => {
    if (e.data && e.data.type === "streamlit:setComponentValue") window.sent.push(e.data.value);
  });
}"""


def render(page: Any, version: int) -> None:
    args = {"code": CODE, "version": version, "student": STUDENT}
    page.evaluate("(args) => window.postMessage({type: 'streamlit:render', args: args}, '*')", args)


class Route:
    """The follow route as the server answers it: at once when the page's `after` is not the
    class's version (404 while there is no class), else held until `move`."""

    def __init__(self) -> None:
        self.now: int | None = 1
        self.held: list[Any] = []
        self.asked: list[int] = []  # the `after` of every request, in order
        self.who: set[str] = set()  # the `me` of every request

    def answer(self, route: Any) -> None:
        query = parse_qs(urlparse(route.request.url).query)
        after = int(query["after"][0])
        self.asked.append(after)
        self.who.update(query.get("me", ["(none)"]))
        if self.now is None:
            route.fulfill(status=404, body=json.dumps({"error": "no class"}))
        elif self.now != after:
            route.fulfill(body=json.dumps({"version": self.now, "changed": True}))
        else:
            self.held.append(route)

    def move(self, version: int | None) -> None:
        self.now = version
        held, self.held = self.held, []
        for route in held:
            if version is None:
                route.fulfill(status=404, body=json.dumps({"error": "no class"}))
            else:
                route.fulfill(body=json.dumps({"version": version, "changed": True}))


@pytest.fixture
def page() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page()
        html = {"body": FOLLOW_HTML, "content_type": "text/html"}
        tab.route(f"{ORIGIN}/component/follow/index.html", lambda r: r.fulfill(**html))
        route = Route()
        tab.route(f"{ORIGIN}/{FOLLOW_PATH}/{CODE}?*", route.answer)
        tab.goto(f"{ORIGIN}/component/follow/index.html")
        tab.evaluate(HARNESS)
        tab.follow = route
        yield tab
        for held in route.held:  # let the browser close without requests in flight
            held.abort()
        browser.close()


def test_it_waits_without_polling_and_asks_again_until_a_redraw_brings_the_version(
    page: Any,
) -> None:
    render(page, 1)
    page.wait_for_timeout(RETRY_MS)
    assert page.evaluate("window.sent") == [], "the page shows the class's version: no rerun"
    assert page.follow.asked == [1], "one request, held: no polling"
    assert page.follow.who == {STUDENT}, "the request says whose page it is (the teacher's count)"
    page.follow.move(2)  # the teacher moves
    page.wait_for_function("window.sent.length === 1", timeout=5_000)
    page.wait_for_timeout(RETRY_MS // 2)
    assert len(page.evaluate("window.sent")) == 1, "one rerun asked"
    assert page.follow.asked == [1, 2], "then it waits for the version after the new one"
    page.wait_for_function("window.sent.length === 2", timeout=RETRY_MS * 3)  # that rerun lost
    first, again = page.evaluate("window.sent")
    assert first[0] == again[0] == 2 and first != again  # a value Streamlit has not seen
    render(page, 2)  # the page is drawn with the new version
    settled = len(page.evaluate("window.sent"))
    page.wait_for_timeout(2 * RETRY_MS)
    assert len(page.evaluate("window.sent")) == settled
    assert page.follow.asked == [1, 2]


def test_a_class_the_server_does_not_know_asks_for_a_rerun_now_and_then(page: Any) -> None:
    """No such class on the server (it ended, or the store lost it): the page reruns, which
    says what became of the class; once per RETRY_MS, not in a tight loop."""
    page.follow.now = None
    render(page, 1)
    page.wait_for_function("window.sent.length === 1", timeout=5_000)
    assert page.evaluate("window.sent")[0][0] == "unread"
    page.wait_for_timeout(RETRY_MS // 2)
    assert len(page.evaluate("window.sent")) == 1
    assert len(page.follow.asked) == 1
    page.follow.now = 1  # back, at the version the page shows: nothing more to ask
    page.wait_for_timeout(2 * RETRY_MS + 500)
    assert len(page.evaluate("window.sent")) == 1
    assert page.follow.held, "it waits again"
