"""A live class in real browsers (issue 49), on one `attnlens serve` for the module: the
teacher's address carries no key, so the URL copied from the teacher's window, opened in a fresh
browser, joins as a student and moves nothing, while the teacher's own browser stays the teacher
after a reload (an HttpOnly cookie); an old link with key= is taken once, out of the address
(its history entry replaced) and said so; another device takes control with a one-time code,
which works once; the class's "joined here now" drops as students' tabs close; and a student's
slide on a phone (360 and 390 px, light and dark) is laid out for it: the app's font, no text
over other text or cut, plots at least 250 px wide, every key labelled, the colour bar no wider
than the plots, cell numbers apart. ATTNLENS_SCREENSHOTS=DIR keeps the phones' screenshots.
"""

from __future__ import annotations

import itertools
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ACTIVE_SECONDS
from attnlens.app.classroom.stores import open_store
from helpers import figure_checks as check
from helpers.apptest import require_bundled
from helpers.browser import choose_theme, chromium
from helpers.class_server import Server
from helpers.lecture_page import (
    COUNTER,
    FOLLOWER,
    FOREGROUND,
    move_to,
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
    # the address shown copies as it reads: no invisible word joiner after its colons
    address = teacher.locator(".st-key-lec_hand_over_code code").inner_text().strip()
    assert re.fullmatch(rf"https?://[\w.\[\]:-]+/_attnlens/teach\?class={code}", address), address
    other = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    other.goto(served[0] + address[address.index("/_attnlens") :], timeout=60_000)
    other.fill("#once", once.lower())
    other.get_by_role("button", name="Take control of the class").click()
    teaches(other)  # the lecture, at the class's slide, as its teacher
    assert other.evaluate(COUNTER) == f"{SLIDE} / 15" and "key=" not in other.url
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
    """The first tab is closed just after its page told the store it is there (its last follow
    request), and the teacher's count must drop before that would have expired
    (ACTIVE_SECONDS): it drops because the tab closed, not because time passed."""
    teacher, code = taught
    teaches(teacher)
    students = [open_student(browser, served[0], code, SLIDE) for _ in range(2)]
    teacher.wait_for_function(here_now(2), timeout=120_000)  # only these two pages are open
    me = dict(
        students[0].evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")
    )
    told = fresh_seen(served[1], code, me["me"])
    students[0].close()
    teacher.wait_for_function(here_now(1), timeout=120_000)
    dropped = time.time()
    assert dropped - told < ACTIVE_SECONDS - 3, (
        f"the count dropped {dropped - told:.1f} s after the page last told the store: "
        "by time passing, not by the tab closing"
    )
    students[1].close()
    teacher.wait_for_function(here_now(0), timeout=120_000)
    students[1].context.close()


def here_now(n: int) -> str:
    """A page function true once the teacher's count says n students are here now."""
    return f"() => / {n} of \\d+ joined here now/.test(({HERE_NOW})())"


def fresh_seen(path: Path, code: str, me: str, within: float = 8.0) -> float:
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


PHONES = (360, 390)
LEAST_PLOT_PX = 250
# Each plot of the student's slide (drawn in the follow component's own page): its plot area,
# its x axis's labels, and the colour bars' boxes
PLOTS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap((p) =>
  Object.values(p._fullLayout._plots).map((s) => ({
    title: String((p.layout.title || {}).text || ''), width: Math.round(s.xaxis._length),
    top: s.yaxis._offset, bottom: s.yaxis._offset + s.yaxis._length,
    keys: [...p.querySelectorAll('.' + s.id + ' .xtick text, g.' + s.xaxis._id + 'tick text')]
      .map((t) => t.textContent),
    bars: [...p.querySelectorAll('.colorbar')].map((b) => b.getBoundingClientRect().width),
  })))"""
CELLS = """() => [...document.querySelectorAll('.heatmaplayer text')].map((t) => {
  const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })"""
FONTS = """() => ({body: getComputedStyle(document.body).fontFamily,
  plot: [...document.querySelectorAll('.js-plotly-plot .gtitle, .js-plotly-plot .xtick text')]
    .map((t) => getComputedStyle(t).fontFamily),
  loaded: [...document.fonts].some((f) => f.family.replace(/"/g, '') === 'Source Sans'
    && f.status === 'loaded')})"""
BACKGROUND = "() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"


def test_a_students_slide_on_a_phone_is_laid_out_for_it(
    browser: Any, served: tuple[str, Path], taught: tuple[Any, str]
) -> None:
    """The slides issue 49 named: tokens become vectors (3), scaled dot-product attention (4:
    Q, K, V and the softmax side by side) and four heads (6)."""
    teacher, code = taught
    phones = {w: phone(browser, served[0], code, w) for w in PHONES}
    for n in (3, 4, 6):
        move_to(teacher, n)
        for width, page in phones.items():
            laid_out_for_a_phone(page, n, f"slide {n} at {width} px")
            keep(page, f"phone-student-slide{n}-{width}.png")
    dark = phones[360]
    choose_theme(dark, "Dark", settle_ms=1500)
    laid_out_for_a_phone(dark, 6, "slide 6 at 360 px, dark")
    keep(dark, "phone-student-slide6-360-dark.png")
    for page in phones.values():
        page.context.close()


def phone(browser: Any, url: str, code: str, width: int) -> Any:
    page = browser.new_context(viewport={"width": width, "height": 844}).new_page()
    page.goto(f"{url}/?class={code}", timeout=180_000)
    page.wait_for_selector(FOLLOWER, state="attached", timeout=180_000)
    return page


def drawn(page: Any) -> Any:
    """The follow component's own page, where the student's slide is drawn."""
    return next(f for f in page.frames if "follow" in f.url or "attnlens_follow" in f.name)


def rgb(css: str) -> list[float]:
    """An rgb(…) colour as [r, g, b, 1]."""
    return [float(v) for v in css[css.index("(") + 1 : -1].split(",")[:3]] + [1.0]


def laid_out_for_a_phone(page: Any, n: int, where: str) -> None:
    page.wait_for_function(shows(n), timeout=120_000)
    slide = drawn(page)
    slide.wait_for_function("() => document.querySelector('.js-plotly-plot .main-svg')",
                            timeout=60_000)  # fmt: skip
    page.wait_for_timeout(1500)  # Plotly's automargin settles
    fonts = slide.evaluate(FONTS)
    assert fonts["loaded"] and "Source Sans" in fonts["body"], (where, fonts)
    assert all("Source Sans" in f for f in fonts["plot"]), (where, set(fonts["plot"]))
    found = slide.evaluate(check.TEXTS)
    behind = rgb(page.evaluate(BACKGROUND))  # the app's, behind the component's clear page
    for t in found:
        t["behind"][2] = behind
    assert len(found) > 10, where
    assert not check.overlapping(found), (where, check.overlapping(found))
    assert not check.clipped(found), (where, check.clipped(found))
    assert not check.titles_on_plots(found), (where, check.titles_on_plots(found))
    assert not check.unreadable(found), (where, check.unreadable(found))
    plots = slide.evaluate(PLOTS)
    narrow = [(p["title"][:30], p["width"]) for p in plots if p["width"] < LEAST_PLOT_PX]
    assert not narrow, f"{where}: plots under {LEAST_PLOT_PX} px: {narrow}"
    widest = max(p["width"] for p in plots)
    assert all(w <= widest + 2 for p in plots for w in p["bars"]), (where, plots)
    for a, b in itertools.combinations(plots, 2):  # stacked: no plot beside another
        assert a["bottom"] <= b["top"] or b["bottom"] <= a["top"], (where, a, b)
    if n == 6:  # four heads, each over the same 6 keys, every key labelled
        assert len(plots) == 4 and all(len(p["keys"]) == 6 for p in plots), (where, plots)
    cells = slide.evaluate(CELLS)
    for a, b in itertools.combinations(cells, 2):
        apart = a[2] <= b[0] + 1 or b[2] <= a[0] + 1 or a[3] <= b[1] + 1 or b[3] <= a[1] + 1
        assert apart, f"{where}: cell numbers run into each other at {a} and {b}"


def keep(page: Any, name: str) -> None:
    """The whole student's page as a screenshot, where ATTNLENS_SCREENSHOTS names a folder."""
    folder = os.environ.get("ATTNLENS_SCREENSHOTS")
    if not folder:
        return
    size = page.viewport_size
    tall = page.evaluate(f"() => document.querySelector(\"{FOLLOWER}\").getBoundingClientRect()"
                         ".bottom + 60")  # fmt: skip
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], int(tall))})
    page.wait_for_timeout(1000)
    page.screenshot(path=str(Path(folder) / name))
    page.set_viewport_size(size)
