"""The follow component in a real browser, alone: it waits on the follow route, and when the
route brings a new version it fetches the slide's payload and draws it itself (no rerun of the
Streamlit page asked: a rerun per student is what a slide change cost); text from the deck or
the model shows as text; an answer is posted as JSON and shown chosen; the reveal shows the
student's result and the class's answers. The server's routes are played here by the test:
the follow route holds each request until the test moves the class, as the server does."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from attnlens.app.classroom.board import FOLLOW_HTML, FOLLOW_PATH, PLOTLY_JS, RETRY_MS
from attnlens.app.classroom.follow_page import ANSWER_PATH, PLOTLY_FILE, SLIDE_PATH
from helpers.server import CHROMIUM_ARGS

pytestmark = [pytest.mark.browser]
CHROMIUM = shutil.which("chromium")
ORIGIN = "http://follow.test"
CODE = "ABC123"
STUDENT = "s0-_" * 4  # a student id as the server gives them out
QID = "0123456789abcdef"
HOSTILE = '<img src=x onerror="window.pwned=1">'

# The page plays Streamlit: it keeps every value the component sends (the component is the
# top window here, so it posts to itself) and can draw the component with its arguments.
HARNESS = """() => {
  window.sent = [];
  window.addEventListener("message", (e) => {
    if (e.data && e.data.type === "streamlit:setComponentValue") window.sent.push(e.data.value);
  });
}"""


def render(page: Any, version: int) -> None:
    args = {"code": CODE, "version": version, "student": STUDENT, "nickname": HOSTILE}
    theme = {"base": "dark", "textColor": "rgb(250, 250, 250)", "primaryColor": "#ff4b4b"}
    page.evaluate(
        "([args, theme]) => window.postMessage({type: 'streamlit:render', args: args,"
        " theme: theme}, '*')",
        [args, theme],
    )


def payload(version: int, revealed: bool = False) -> dict[str, Any]:
    """A slide as the slide route sends it (what slide_payload.py builds)."""
    options = ["A · 0 · the", "B · 1 · cat", "C · 2 · <b>x</b>"]
    question: dict[str, Any] = {"id": QID, "prompt": HOSTILE, "revealed": revealed}
    question["options"] = options
    if revealed:
        question.update(answer=1, why="it looks back")
    bars = {"data": [{"type": "bar", "x": [1, 5, 2], "y": ["A", "B", "C"]}], "layout": {}}
    return {
        "code": CODE,
        "version": version,
        "header": {
            "title": f"Slide {version} {HOSTILE}",
            "number": version,
            "count": 14,
            "caption": "§3.2.1 · deck · translate",
        },
        "figure": {"data": [{"type": "heatmap", "z": [[0.1, 0.9], [0.5, 0.5]]}], "layout": {}},
        "problem": None,
        "notes": [HOSTILE],
        "words": "<p><strong>bold</strong> &lt;i&gt;</p>",
        "question": question,
        "histogram": bars if revealed else None,
        "explore": "./explore?page=explore&model=translate",
    }


class Server:
    """The follow, slide and answer routes as the server answers them: the follow route at
    once when the page's `after` is not the class's version (404 while there is no class),
    else held until `move`."""

    def __init__(self) -> None:
        self.now: int | None = 1
        self.revealed = False
        self.held: list[Any] = []
        self.asked: list[int] = []  # the `after` of every follow request, in order
        self.slides: list[str] = []  # the query of every slide request
        self.posted: list[dict[str, Any]] = []  # every answer's body
        self.post_status = 200
        self.with_slide = False  # the follow route sends the new slide itself (`&slide=1`)

    def follow(self, route: Any) -> None:
        query = parse_qs(urlparse(route.request.url).query)
        after = int(query["after"][0])
        self.asked.append(after)
        assert query["slide"] == ["1"] and query["me"] == [STUDENT]
        if self.now is None:
            route.fulfill(status=404, body=json.dumps({"error": "no class"}))
        elif self.now != after:
            route.fulfill(body=json.dumps(self.changed(self.now)))
        else:
            self.held.append(route)

    def changed(self, version: int) -> dict[str, Any]:
        if self.with_slide:
            return payload(version, self.revealed)
        return {"version": version, "changed": True}

    def slide(self, route: Any) -> None:
        self.slides.append(urlparse(route.request.url).query)
        if self.now is None:
            route.fulfill(status=404, body=json.dumps({"error": "no class"}))
        else:
            route.fulfill(body=json.dumps(payload(self.now, self.revealed)),
                          content_type="application/json")  # fmt: skip

    def answer(self, route: Any) -> None:
        request = route.request
        if request.method == "GET":
            route.fulfill(body=json.dumps({"chosen": None, "question": QID}))
            return
        assert request.headers["content-type"] == "application/json"
        body = json.loads(request.post_data)
        self.posted.append(body)
        said = {"chosen": body["choice"]} if self.post_status == 200 else {"error": "removed"}
        route.fulfill(status=self.post_status, body=json.dumps(said))

    def move(self, version: int | None, revealed: bool = False) -> None:
        self.now, self.revealed = version, revealed
        held, self.held = self.held, []
        for route in held:
            if version is None:
                route.fulfill(status=404, body=json.dumps({"error": "no class"}))
            else:
                route.fulfill(body=json.dumps(self.changed(version)))


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
        plotly = {"path": str(PLOTLY_JS), "content_type": "text/javascript"}
        tab.route(f"{ORIGIN}/component/follow/{PLOTLY_FILE}", lambda r: r.fulfill(**plotly))
        server = Server()
        tab.route(f"{ORIGIN}/{FOLLOW_PATH}/{CODE}?*", server.follow)
        tab.route(f"{ORIGIN}/{SLIDE_PATH}/{CODE}?*", server.slide)
        tab.route(f"{ORIGIN}/{ANSWER_PATH}/{CODE}*", server.answer)
        tab.goto(f"{ORIGIN}/component/follow/index.html")
        tab.evaluate(HARNESS)
        tab.server = server
        yield tab
        for held in server.held:  # let the browser close without requests in flight
            held.abort()
        browser.close()


def text(page: Any, element: str) -> str:
    return str(page.evaluate(f"document.getElementById('{element}').textContent"))


def test_a_move_is_drawn_from_the_payload_without_a_rerun(page: Any) -> None:
    render(page, 1)
    page.wait_for_function("document.getElementById('lec_counter').textContent === '1 / 14'",
                           timeout=90_000)  # fmt: skip
    assert page.server.slides == ["v=1"] and page.server.asked == [1], "one each: no polling"
    page.server.move(2)  # the teacher moves
    page.wait_for_function("document.getElementById('lec_counter').textContent === '2 / 14'",
                           timeout=90_000)  # fmt: skip
    assert text(page, "lec_title") == f"Slide 2 {HOSTILE}"  # as text
    page.wait_for_timeout(RETRY_MS)
    assert page.evaluate("window.sent") == [], "drawn in the browser: no rerun asked"
    assert page.server.slides == ["v=1", "v=2"] and page.server.asked == [1, 2]
    assert page.evaluate("document.querySelectorAll('#lec_figure .main-svg').length") > 0
    assert page.evaluate("document.querySelector('#lec_words strong').textContent") == "bold"
    assert HOSTILE in text(page, "lec_caption") and HOSTILE in text(page, "lec_notes")
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("document.getElementById('lec_explore').href").startswith(
        f"{ORIGIN}/explore?page=explore"
    )


def test_a_move_that_brings_its_slide_is_drawn_without_asking_for_it(page: Any) -> None:
    page.server.with_slide = True
    render(page, 1)
    page.wait_for_function("document.getElementById('lec_counter').textContent === '1 / 14'",
                           timeout=90_000)  # fmt: skip
    page.server.move(2)
    page.wait_for_function("document.getElementById('lec_counter').textContent === '2 / 14'",
                           timeout=90_000)  # fmt: skip
    page.wait_for_timeout(RETRY_MS)
    assert page.server.slides == ["v=1"], "the second slide came with its version"
    assert page.server.asked == [1, 2] and page.evaluate("window.sent") == []


def test_an_answer_is_posted_shown_chosen_and_the_reveal_shows_the_result(page: Any) -> None:
    render(page, 1)
    buttons = "#lec_options button"
    page.wait_for_selector(buttons, timeout=90_000)
    page.locator(buttons).nth(2).click()
    page.wait_for_function("document.querySelectorAll('#lec_options button')[2]"
                           ".textContent.startsWith('✓ ')", timeout=30_000)  # fmt: skip
    assert page.server.posted == [{"me": STUDENT, "question": QID, "choice": 2}]
    assert page.locator(buttons).nth(2).text_content() == "✓ C · 2 · <b>x</b>"
    page.server.move(2, revealed=True)
    page.wait_for_selector("#lec_result", timeout=90_000)
    said = text(page, "lec_result")
    assert said == "Not quite: the answer is B · 1 · cat (you chose C · 2 · <b>x</b>)"
    assert page.evaluate("[...document.querySelectorAll('#lec_options button')]"
                         ".every(b => b.disabled)")  # fmt: skip
    page.wait_for_function(
        "document.getElementById('lec_histogram')?.data?.[0]?.x?.join() === '1,5,2'",
        timeout=30_000,
    )
    assert page.evaluate("window.sent") == []


def test_an_answer_refused_for_a_removed_student_asks_the_page_to_say_so(page: Any) -> None:
    render(page, 1)
    page.wait_for_selector("#lec_options button", timeout=90_000)
    page.server.post_status = 403
    page.locator("#lec_options button").first.click()
    page.wait_for_function("window.sent.length === 1", timeout=10_000)
    assert page.evaluate("window.sent")[0][0] == "gone"
    assert text(page, "lec_status") == "removed"


def test_a_class_the_server_does_not_know_asks_for_a_rerun_now_and_then(page: Any) -> None:
    """No such class on the server (it ended, or the store lost it): the page reruns, which
    says what became of the class; once per RETRY_MS, not in a tight loop."""
    page.server.now = None
    render(page, 1)
    page.wait_for_function("window.sent.length === 1", timeout=10_000)
    assert page.evaluate("window.sent")[0][0] == "unread"
    page.wait_for_timeout(RETRY_MS // 2)
    assert len(page.evaluate("window.sent")) == 1
    page.server.now = 1  # back: the slide is drawn, the request waits again
    page.wait_for_function("document.getElementById('lec_counter').textContent === '1 / 14'",
                           timeout=90_000)  # fmt: skip
    page.wait_for_timeout(RETRY_MS)
    assert page.server.held, "it waits again"
