"""A live class on Redis in real browsers: two replicas of `attnlens serve` sharing one class,
and Redis killed mid-question and back empty (issue 39). Split from test_browser_class.py so
the two files run on different test workers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from attnlens.app.classroom.stores import open_store
from helpers.apptest import require_bundled
from helpers.browser import chromium
from helpers.class_server import HISTOGRAM_TOTAL, Server, sees_result
from helpers.lecture_page import FOLLOWER, FOREGROUND, OPTIONS, open_student, shows, start_class
from helpers.redis_server import MISSING, REDIS_SERVER, RedisServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, launched once for this module's tests."""
    with chromium(FOREGROUND) as launched:
        yield launched


def test_two_replicas_share_one_class_through_redis(browser: Any, redis_url: str) -> None:
    """The teacher on one replica, students on another: Redis is the class both see."""
    require_bundled("translate")
    first, second = Server(redis_url), Server(redis_url)
    with first.run(), second.run():
        teacher, code = start_class(browser, first.url, 3)
        student = open_student(browser, second.url, code, 3)
        teacher.keyboard.press("ArrowRight")
        student.wait_for_function(shows(4), timeout=30_000)
        student.frame_locator(FOLLOWER).locator(OPTIONS).nth(0).click()
        teacher.wait_for_function(
            "() => document.querySelector('.st-key-lec_answer_count')?.innerText.startsWith('1 ')",
            timeout=30_000,
        )
        teacher.get_by_role("button", name="Reveal the answers").click()
        sees_result(student)
        state = open_store(redis_url).state(code)
        assert state is not None and state.revealed == state.question_id


ANSWERED = "() => document.querySelector('.st-key-lec_answer_count')?.innerText"
NOTICES = "() => document.querySelector('.st-key-lec_store_notices')?.innerText || ''"


@pytest.mark.skipif(REDIS_SERVER is None, reason=MISSING)
def test_redis_killed_mid_class_and_back_empty_keeps_every_acknowledged_answer(
    browser: Any, tmp_path: Any
) -> None:
    """The worst case of issue 39: Redis keeping nothing on disk, killed (-9) mid-question and
    restarted empty. The students never see its address; the server writes the class back from
    its copy, the teacher is told, and every answer a student saw counted is counted."""
    require_bundled("translate")
    redis = RedisServer(tmp_path, persist=False)
    redis.start()
    try:
        server = Server(redis.url)
        with server.run():
            teacher, code = start_class(browser, server.url, 4)  # a "where" question
            students = [open_student(browser, server.url, code, 4) for _ in range(3)]
            for i, page in enumerate(students):
                drawn = page.frame_locator(FOLLOWER)
                drawn.locator(OPTIONS).nth(i).click()
                drawn.locator(f"{OPTIONS}:has-text('✓')").wait_for(timeout=30_000)
            teacher.wait_for_function(f"() => ({ANSWERED})()?.startsWith('3 ')", timeout=30_000)
            redis.kill()
            drawn = students[0].frame_locator(FOLLOWER)
            drawn.locator(OPTIONS).nth(3).click()
            drawn.locator("text=cannot be reached just now").wait_for(timeout=30_000)
            body = students[0].evaluate("() => document.body.innerText")
            body += drawn.locator("body").inner_text()
            assert "redis" not in body.lower() and str(redis.port) not in body
            redis.start()  # empty
            teacher.wait_for_function(f"() => ({NOTICES})().includes('Redis lost')", timeout=30_000)
            assert "3 answer(s)" in teacher.evaluate(NOTICES)
            teacher.wait_for_function(f"() => ({ANSWERED})()?.startsWith('3 ')", timeout=30_000)
            state = open_store(redis.url).state(code)
            assert state is not None and state.question_id is not None
            assert open_store(redis.url).counts(code, state.question_id, 4) == [1, 1, 1, 0]
            teacher.get_by_role("button", name="Reveal the answers").click()
            teacher.wait_for_function(f"() => ({HISTOGRAM_TOTAL})() === 3", timeout=30_000)
            for page in students:
                sees_result(page)
    finally:
        redis.stop()
