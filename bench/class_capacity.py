"""Live class (issue 14): how many students one `attnlens serve` holds, and answers/s per store.

1. Answers per second: T threads (as Streamlit's session threads) record answers to one question
   through the class store, SQLite and Redis (a redis-server started here, kept on disk as
   docs/deploying.md says: appendonly yes, appendfsync always), beside a reference measured in
   the same run: the bare write of the same row (sqlite3 INSERT OR REPLACE with the same
   pragmas, each commit synced; a plain HSET on the same Redis), so the ratio is the price of the
   store's checks (the class's rules, the store's token, the server's copy).
2. Class size: a teacher page and N student pages (Debian's Chromium, a browser context each, in
   the foreground) on one server; the teacher presses → MOVES times and each student's follow
   latency is measured in its own page (key press → its slide counter changes, one clock). N grows
   until the 95th percentile passes 2 s or the time budget ends; the students' browsers share the
   machine's two cores with the server, so the count is a lower bound for real devices.

    .venv/bin/python -m bench.class_capacity [--sizes 5 10 20 30 40 60] [--moves 3]
        [--answers 3000] [--threads 8] [--budget 900] [--skip-browser]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import open_store
from attnlens.app.teaching.questions import Question
from bench.threads import seconds_all_done
from tests.helpers.lecture_page import (
    FOREGROUND,
    WATCH,
    open_student,
    start_class,
    teacher_pass,
)
from tests.helpers.redis_server import REDIS_SERVER, redis_server
from tests.helpers.server import CHROMIUM_ARGS, free_port, running, serve_command

LIMIT_S = 2.0
QUESTION = Question("where", "?", ("a", "b", "c", "d"), 0, "").to_dict()


def in_threads(n_threads: int, work: list[Any], one: Callable[[Any], object]) -> float:
    """Seconds for n_threads threads to do every item of work once, split evenly."""

    def run(part: list[Any]) -> None:
        for item in part:
            one(item)

    threads = [threading.Thread(target=run, args=(work[i::n_threads],)) for i in range(n_threads)]
    return seconds_all_done(threads)


def store_rate(store: ClassStore, answers: int, threads: int) -> float:
    """Answers per second through the store's checked write."""
    made = store.create(ClassState("section3", 0))
    state = store.state(made.code)
    assert state is not None
    store.update(made.code, made.key, state.moved(question=QUESTION, question_id="q"))
    students = [store.join(made.code).id for _ in range(200)]
    work = [(students[i % len(students)], i % 4) for i in range(answers)]

    def one(item: tuple[str, int]) -> None:
        assert store.answer(made.code, item[0], "q", item[1])

    return answers / in_threads(threads, work, one)


def sqlite_reference(path: Path, answers: int, threads: int) -> float:
    """The same row written bare: one connection under a lock, WAL, synchronous=FULL (the
    store's: an answer is on disk before it is acknowledged)."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(
        "CREATE TABLE a (code, question, student, choice, at, "
        "PRIMARY KEY (code, question, student))"
    )
    lock = threading.Lock()

    def one(i: int) -> None:
        with lock:
            db.execute(
                "INSERT OR REPLACE INTO a VALUES ('C', 'q', ?, ?, ?)",
                (f"s{i % 200}", i % 4, time.time()),
            )

    rate = answers / in_threads(threads, list(range(answers)), one)
    db.close()
    return rate


def redis_reference(url: str, answers: int, threads: int) -> float:
    """A plain HSET per answer, no checks."""
    import redis

    client = redis.Redis.from_url(url)
    rate = answers / in_threads(
        threads, list(range(answers)), lambda i: client.hset("ref:answers", f"s{i % 200}", i % 4)
    )
    client.close()
    return rate


def answers_table(answers: int, threads: int, rounds: int = 3) -> None:
    """Ours and the bare write in alternation, `rounds` times each; the medians."""
    print(
        f"\nAnswers per second through the class store ({answers} answers, {threads} threads, "
        f"median of {rounds} alternating rounds)"
    )
    print(f"{'store':<8} {'ours /s':>9} {'bare write /s':>14} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        ours, bare = [], []
        for r in range(rounds):
            ours.append(store_rate(open_store(f"sqlite:///{base}/c{r}.sqlite3"), answers, threads))
            bare.append(sqlite_reference(base / f"ref{r}.sqlite3", answers, threads))
        _row("sqlite", ours, bare)
        if REDIS_SERVER is None:
            print("redis    skipped: redis-server is not installed (make test installs it)")
            return
        with redis_server(base) as url:
            ours, bare = [], []
            for _ in range(rounds):
                ours.append(store_rate(open_store(url), answers, threads))
                bare.append(redis_reference(url, answers, threads))
            _row("redis", ours, bare)


def _row(name: str, ours: list[float], bare: list[float]) -> None:
    a, b = statistics.median(ours), statistics.median(bare)
    print(f"{name:<8} {a:>9.0f} {b:>14.0f} {a / b:>6.2f}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Class:
    """A teacher page and its students in one Chromium."""

    def __init__(self, browser: Any, url: str, store: str) -> None:
        self.browser, self.url = browser, url
        self.teacher, self.code = start_class(browser, url, 1, timeout=120_000)
        # every student's page comes from this machine's one address: the class takes them all
        held = teacher_pass(self.teacher, self.code)  # the browser's pass: moves it as the key
        open_store(store).configure(self.code, held, size=1000, per_address=1000, locked=False)
        self.slide = 1
        self.students: list[Any] = []

    def grow(self, n: int) -> None:
        while len(self.students) < n:
            self.students.append(open_student(self.browser, self.url, self.code, self.slide))

    def move(self) -> list[float]:
        """The teacher presses → (or ← past the third slide); each student's latency in s."""
        for page in self.students:
            page.evaluate(WATCH)
        forward = self.slide < 3
        self.slide += 1 if forward else -1
        shown = f"{self.slide} / 14"
        pressed = self.teacher.evaluate("Date.now()")
        self.teacher.keyboard.press("ArrowRight" if forward else "ArrowLeft")
        late = []
        for page in self.students:
            page.wait_for_function(
                f"() => window.__shown && window.__shown['{shown}']", timeout=60_000
            )
            late.append((page.evaluate(f"() => window.__shown['{shown}']") - pressed) / 1000)
        return late


def capacity_table(sizes: list[int], moves: int, budget: float) -> None:
    from playwright.sync_api import TimeoutError as NotFollowed
    from playwright.sync_api import sync_playwright

    print(
        f"\nClass size on one `attnlens serve` (translate; {moves} slide moves per size; "
        f"limit: p95 ≤ {LIMIT_S} s)"
    )
    print(f"{'students':>8} {'moves':>6} {'median s':>9} {'p95 s':>7} {'max s':>7}")
    start, largest = time.monotonic(), 0
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        store = f"sqlite:///{folder}/c.sqlite3"
        command = [*serve_command("translate", port), "--class-store", store]
        with running(command, port) as url, sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS + FOREGROUND
            )
            room = Class(browser, url, store)
            for n in sizes:
                if time.monotonic() - start > budget:
                    print(f"(time budget of {budget:.0f} s spent: stopped before {n})")
                    break
                try:
                    room.grow(n)
                    room.move()  # every new page settles once, unmeasured
                    late = [x for _ in range(moves) for x in room.move()]
                except NotFollowed:  # a class this size is not held: say so, not a traceback
                    print(f"{n:>8}  a student's page did not follow within 60 s")
                    break
                p95 = percentile(late, 0.95)
                print(
                    f"{n:>8} {moves:>6} {statistics.median(late):>9.2f} {p95:>7.2f} "
                    f"{max(late):>7.2f}"
                )
                if p95 > LIMIT_S:
                    break
                largest = n
            browser.close()
    print(
        f"largest class with follow p95 ≤ {LIMIT_S} s: {largest} students"
        + ("" if largest else " (none of the sizes tried)")
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20, 30, 40, 60])
    parser.add_argument("--moves", type=int, default=3)
    parser.add_argument("--answers", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds for the browsers")
    parser.add_argument("--skip-browser", action="store_true")
    args = parser.parse_args(argv)
    answers_table(args.answers, args.threads)
    if args.skip_browser:
        return
    if shutil.which("chromium") is None:
        print("class size skipped: Debian's chromium is not installed (make test installs it)")
        return
    capacity_table(sorted(args.sizes), args.moves, args.budget)


if __name__ == "__main__":
    main()
