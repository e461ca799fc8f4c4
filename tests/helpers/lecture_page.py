"""The Lecture page as a browser sees it: a teacher starting a class, students joining it, what
the slide counter shows and when it changed, and the flags that keep every student's page in the
foreground (used by the live-class browser test and bench/class_capacity.py)."""

from __future__ import annotations

import contextlib
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

# Each student is a device of their own, in the foreground: no background-tab throttling.
FOREGROUND = [
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
# A following student's slide: drawn in the browser by the follow component (follow_page.py)
FOLLOWER = "iframe[title*='attnlens_follow']"
OPTIONS = "#lec_options button"  # a following student's answer buttons, in FOLLOWER
# The slide counter: the page's own (a teacher, a student stepped away) or the one FOLLOWER
# draws (same origin: the page reads into it).
COUNTER = """() => {
  const own = document.querySelector('.st-key-lec_counter');
  const drawn = document.querySelector("iframe[title*='attnlens_follow']");
  const el = own || drawn?.contentDocument?.getElementById('lec_counter');
  return el?.innerText?.trim();
}"""
# Notes in window.__shown the page's own time at which each slide counter text first showed.
WATCH = """() => {
  window.__shown = {};
  const note = () => {
    const text = (%COUNTER%)();
    if (text && !(text in window.__shown)) window.__shown[text] = Date.now();
  };
  note();
  new MutationObserver(note).observe(document.body,
    {subtree: true, childList: true, characterData: true});
  setInterval(note, 20);  // FOLLOWER's changes are in its own document
}""".replace("%COUNTER%", COUNTER)


def shows(n: int) -> str:
    """A page function true once the counter shows slide n of the 15 of deck section3."""
    return f"() => ({COUNTER})() === '{n} / 15'"


def start_class(browser: Any, url: str, slide: int, timeout: int = 60_000) -> tuple[Any, str]:
    """A teacher's page (1920×1080) on deck section3 at `slide` that starts a class: the page,
    and the class's join code read from its link."""
    teacher = browser.new_page(viewport={"width": 1920, "height": 1080})
    teacher.goto(f"{url}/?page=lecture&deck=section3&slide={slide}", timeout=timeout)
    teacher.wait_for_function(shows(slide), timeout=timeout)
    teacher.get_by_role("button", name="Start a class").click()
    teacher.wait_for_function("() => location.search.includes('class=')", timeout=timeout // 2)
    return teacher, parse_qs(urlparse(teacher.url).query)["class"][0]


def teacher_pass(page: Any, code: str, timeout: int = 60_000) -> str:
    """The pass a teacher's browser keeps for class `code` (its HttpOnly cookie, which no
    script of the page reads; Playwright does), once it has it."""
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        for cookie in page.context.cookies():
            if cookie["name"] == f"attnlens_teach_{code}":
                return str(cookie["value"])
        page.wait_for_timeout(200)
    raise AssertionError(f"the teacher's browser kept no pass for class {code}")


def open_student(browser: Any, url: str, code: str, slide: int) -> Any:
    """A student of class `code` on a phone-sized device of their own (a browser context),
    once their page shows the teacher's `slide`; `page.sent` notes the times its websocket sent
    Streamlit anything (a rerun of its script sends one)."""
    page = browser.new_context(viewport={"width": 412, "height": 915}).new_page()
    page.sent = []  # when the page's websocket sent a message to Streamlit (a rerun is one)
    page.on("websocket", lambda ws: ws.on("framesent", lambda _: page.sent.append(time.time())))
    page.goto(f"{url}/?class={code}", timeout=180_000, wait_until="commit")
    page.wait_for_function(shows(slide), timeout=180_000)
    return page


def move_to(teacher: Any, n: int, timeout_s: float = 240.0) -> None:
    """The teacher's page moved to slide n with the arrow keys, a slide at a time, reading the
    counter before each press: a press the page lost while it was busy (a rerun on a loaded
    machine) is pressed again, and one that was only slow is never pressed twice."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout_s
    while (now := int(str(teacher.evaluate(COUNTER)).split(" ")[0])) != n:
        assert time.monotonic() < deadline, f"the teacher's page stayed at slide {now}, not {n}"
        teacher.keyboard.press("ArrowRight" if now < n else "ArrowLeft")
        with contextlib.suppress(PlaywrightTimeout):  # lost: the counter is read again
            teacher.wait_for_function(f"() => ({COUNTER})() !== '{now} / 15'", timeout=30_000)
