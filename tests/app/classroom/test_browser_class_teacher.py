"""The teacher's hold on a class in real browsers (issue 49), on one `attnlens serve` for the
module: the teacher's address carries no key, so the URL copied from the teacher's window,
opened in a fresh browser, joins as a student and moves nothing, while the teacher's own browser
stays the teacher after a reload (an HttpOnly cookie); an old link with key= is taken once, out
of the address (its history entry replaced) and said so; another device takes control with a
one-time code, which works once; and the class's "joined here now" drops as students' tabs close.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ACTIVE_SECONDS
from attnlens.app.classroom.stores import open_store
from helpers.apptest import require_bundled
from helpers.browser import chromium
from helpers.class_server import Server
from helpers.lecture_page import (
    COUNTER,
    FOLLOWER,
    FOREGROUND,
    open_student,
    shows,
    start_class,
    teacher_pass,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLIDE = 4  # asks where a head looks: the teacher's page has "Reveal the answers" and the count
HERE_NOW = "() => document.querySelector('.st-key-lec_answer_count')?.innerText || ''"
REVEAL = "Reveal the answers"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One server for the module (its URL) and the file of its class store."""
    require_bundled("translate")
    path = tmp_path_factory.mktemp("teacher") / "classes.sqlite3"
    server = Server(f"sqlite:///{path}")
    with server.run():
        yield server.url, path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium(FOREGROUND) as launched:
        yield launched


@pytest.fixture(scope="module")
def taught(browser: Any, served: tuple[str, Path]) -> tuple[Any, str]:
    """A teacher's page that started a class on SLIDE, and the class's code."""
    return start_class(browser, served[0], SLIDE, timeout=180_000)


def slide_in_store(served: tuple[str, Path], code: str) -> int:
    state = open_store(f"sqlite:///{served[1]}").state(code)
    assert state is not None
    return state.slide


def teaches(page: Any, timeout: int = 120_000) -> None:
    page.get_by_role("button", name=REVEAL).wait_for(timeout=timeout)


def test_the_url_copied_from_the_teachers_window_gives_no_control(
    browser: Any, served: tuple[str, Path], taught: tuple[Any, str]
) -> None:
    teacher, code = taught
    teaches(teacher)
    assert "key=" not in teacher.url and f"class={code}" in teacher.url
    kept = [c for c in teacher.context.cookies() if c["name"] == f"attnlens_teach_{code}"]
    teacher_pass(teacher, code)  # the browser keeps a pass …
    kept = [c for c in teacher.context.cookies() if c["name"] == f"attnlens_teach_{code}"]
    assert kept and kept[0]["httpOnly"] and kept[0]["sameSite"] == "Strict"  # … no script reads
    assert teacher.evaluate("() => document.cookie").find("attnlens_teach") == -1
    copied = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    copied.goto(teacher.url, timeout=120_000)
    copied.wait_for_selector(FOLLOWER, state="attached", timeout=120_000)  # a student's page
    copied.wait_for_function(shows(SLIDE), timeout=120_000)
    assert copied.get_by_role("button", name=REVEAL).count() == 0
    for key in ("ArrowRight", "PageDown"):
        copied.keyboard.press(key)
    copied.wait_for_timeout(2500)
    assert slide_in_store(served, code) == SLIDE - 1
    copied.context.close()
    teacher.reload(timeout=120_000)  # the teacher's own browser: still the teacher
    teaches(teacher)
    assert "key=" not in teacher.url


def test_an_old_link_with_the_key_is_taken_once_and_leaves_the_address(
    browser: Any, served: tuple[str, Path]
) -> None:
    made = open_store(f"sqlite:///{served[1]}").create(ClassState("section3", SLIDE - 1))
    page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    page.goto(f"{served[0]}/?page=lecture&deck=section3&slide={SLIDE}&class={made.code}"
              f"&key={made.key}", timeout=120_000)  # fmt: skip
    teaches(page)
    page.wait_for_function("() => !location.search.includes('key=')", timeout=60_000)
    page.get_by_text("carried the class's teacher key").wait_for(timeout=30_000)
    teacher_pass(page, made.code)
    page.go_back(timeout=60_000)  # the entry before is the blank tab: none holds the key
    assert page.url == "about:blank"
    page.go_forward(timeout=120_000)  # opened again from an address without the key …
    teaches(page)  # … still the teacher: the browser keeps it
    assert "key=" not in page.url and page.get_by_text("carried the class's").count() == 0
    page.keyboard.press("ArrowRight")
    page.wait_for_function(shows(SLIDE + 1), timeout=60_000)
    assert slide_in_store(served, made.code) == SLIDE
    page.context.close()


def test_another_device_takes_control_with_a_one_time_code_once(
    browser: Any, served: tuple[str, Path], taught: tuple[Any, str]
) -> None:
    teacher, code = taught
    teaches(teacher)
    teacher.get_by_role("button", name="Class", exact=True).click()
    teacher.get_by_role("button", name="Show a one-time code").click()
    shown = teacher.locator(".st-key-lec_hand_over_code h2")
    shown.wait_for(timeout=60_000)
    once = shown.inner_text().strip()
    other = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    other.goto(f"{served[0]}/_attnlens/teach?class={code}", timeout=60_000)
    other.fill("#once", once.lower())
    other.get_by_role("button", name="Take control of the class").click()
    teaches(other)  # the lecture, at the class's slide, as its teacher
    assert other.evaluate(COUNTER) == f"{SLIDE} / 14" and "key=" not in other.url
    teacher.get_by_text("Another device took control").wait_for(timeout=60_000)
    third = browser.new_context().new_page()  # the same code again: refused
    third.goto(f"{served[0]}/_attnlens/teach?class={code}", timeout=60_000)
    third.fill("#once", once)
    third.get_by_role("button", name="Take control of the class").click()
    third.get_by_text("That is not the class's one-time code now").wait_for(timeout=30_000)
    third.context.close()
    other.context.close()
    teacher.keyboard.press("Escape")


def test_joined_here_now_drops_as_students_close_their_tabs(
    browser: Any, served: tuple[str, Path], taught: tuple[Any, str]
) -> None:
    """Each tab is closed just after its page told the store it is there (its last follow
    request), and the teacher's count must drop before that would have expired
    (ACTIVE_SECONDS): it drops because the tab closed, not because time passed."""
    teacher, code = taught
    teaches(teacher)
    students = [open_student(browser, served[0], code, SLIDE) for _ in range(3)]
    teacher.wait_for_function(here_now(3), timeout=120_000)  # only these three pages are open
    ids = [dict(p.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))"))["me"]
           for p in students]  # fmt: skip
    for left, (page, me) in enumerate(zip(students[:2], ids[:2], strict=True), start=1):
        told = fresh_seen(served[1], code, me)
        page.close()
        teacher.wait_for_function(here_now(3 - left), timeout=120_000)
        dropped = time.time()
        assert dropped - told < ACTIVE_SECONDS - 3, (
            f"the count dropped {dropped - told:.1f} s after the page last told the store: "
            "by time passing, not by the tab closing"
        )
    students[2].context.close()


def here_now(n: int) -> str:
    """A page function true once the teacher's count says n students are here now."""
    return f"() => / {n} of \\d+ joined here now/.test(({HERE_NOW})())"


def fresh_seen(path: Path, code: str, me: str, within: float = 4.0) -> float:
    """Wait until the store heard from this student's page within `within` s (a follow request
    tells it every 10-20 s); when it did."""
    deadline = time.time() + 60
    while time.time() < deadline:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            row = db.execute("SELECT seen FROM students WHERE code = ? AND id = ?",
                             (code, me)).fetchone()  # fmt: skip
        if row and time.time() - float(row[0]) <= within:
            return float(row[0])
        time.sleep(0.3)
    raise AssertionError(f"student {me} was not seen for 60 s")
