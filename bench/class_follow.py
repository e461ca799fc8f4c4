"""A lecture hall (issue 37): N students (300 by default) follow a teacher on one `attnlens serve`
(translate, SQLite store), each a bare client (bench/class_client.py) that joins, holds the
follow request, fetches each new slide's payload and answers exactly as the page's component
does, all in this process, with no browser on the machine. Server CPU is read from the server's
process; this process's own CPU (the clients) is reported beside it.

Measured, in order: per student joining (the join link's first run whole); per student per
second while the class stays on one slide (each page holding its follow request, which also
tells the store every SEEN_SECONDS that the student is there); a slide change: the teacher
presses Next, each student's follow request brings the new version, then the new slide's
payload arrives (built once for the class; the student's device draws it, which is not the
server's work: p95 over every student of MOVES moves); every student answering at once. The
reference: the server with the teacher's page alone, over the same time.

    python -m bench.class_follow [--students 300] [--idle 30] [--moves 4] [--batch 4]
        [--replicas K]

With --replicas K (more than 1), K `attnlens serve` share one Redis (a redis-server started
here, kept on disk as docs/deploying.md says) as docs/teaching.md's recipe runs them behind a
load balancer with sticky sessions: the teacher on the first, student i on replica i mod K for
its page and its requests alike; server CPU is every replica's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.stores import open_store
from bench.class_client import Page, Student
from bench.servers import Server, started
from tests.helpers.redis_server import redis_server
from tests.helpers.server import free_port, serve_command

MODEL = "translate"  # the lecture's model
SLIDE = 3  # "Scaled dot-product attention" (4 / 14), which asks a question
IDLE_TARGET_MS = 0.5  # server CPU per student per second, idle
FOLLOW_TARGET_S = 1.0  # slide change → every student has it, p95
JOIN_TARGET_MS = 50.0  # server CPU per joining student
ANSWERS_TARGET_S = 10.0  # every answer recorded within this long of being sent


def clients_cpu() -> float:
    """This process's CPU seconds so far (the clients)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Replicas:
    """The servers of one class: the teacher's page on the first, student i's (page and
    requests: sessions are sticky) on server i mod K; CPU is all of theirs."""

    servers: Sequence[Server]

    @property
    def url(self) -> str:
        return self.servers[0].url

    def url_of(self, student: int) -> str:
        return self.servers[student % len(self.servers)].url

    def cpu_seconds(self) -> float:
        return sum(server.cpu_seconds() for server in self.servers)


@dataclass
class Spent:
    """Server and client CPU seconds, and wall seconds, over a stretch of the bench."""

    server: float
    clients: float
    wall: float


class Meter:
    def __init__(self, server: Replicas) -> None:
        self.server = server
        self.at = (server.cpu_seconds(), clients_cpu(), time.perf_counter())

    def spent(self) -> Spent:
        server, clients, wall = self.at
        return Spent(self.server.cpu_seconds() - server, clients_cpu() - clients,
                     time.perf_counter() - wall)  # fmt: skip


def say(what: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Hall:
    students: int
    replicas: int
    join: Spent
    quiet: Spent  # the teacher's page alone
    as_is: Spent  # every page holding its follow request (and any fragment it has)
    has_it: list[float]  # per student per move: teacher's press → the route brought it
    drawn: list[float]  # … → the new slide's payload arrived (drawn on the device)
    sizes: list[int]  # bytes of each slide payload a student received
    move: list[Spent]
    answers: Spent
    answered: int


async def idle(server: Replicas, seconds: float) -> Spent:
    meter = Meter(server)
    await asyncio.sleep(seconds)
    return meter.spent()


async def hall(server: Replicas, code: str, key: str, n: int, args: argparse.Namespace) -> Hall:
    teacher = Page(server.url, {"page": "lecture", "deck": "section3",
                                "slide": str(SLIDE + 1), "class": code, "key": key})  # fmt: skip
    for again in (True, True, False):  # a server just started, on a busy machine, can take
        try:  # longer than the websocket's 10 s to answer its first handshake
            await teacher.open()
            break
        except TimeoutError:
            if not again:
                raise
            say("the server did not answer the teacher's page in time: opening it again")
    warming = range(2 * len(server.servers))  # each replica's model loaded and slide built
    for warm in [await Student.join(server.url_of(i), code) for i in warming]:
        await warm.close()
    quiet = await idle(server, args.idle)
    meter = Meter(server)
    students: list[Student] = []
    while len(students) < n:
        batch = min(args.batch, n - len(students))
        at = len(students)
        students += await asyncio.gather(
            *(Student.join(server.url_of(at + i), code) for i in range(batch))
        )
        if len(students) % 50 == 0:
            say(f"{len(students)} joined")
    join = meter.spent()
    followers = asyncio.new_event_loop()
    threading.Thread(target=followers.run_forever, name="followers", daemon=True).start()
    for s in students:
        s.start(followers)
    await asyncio.sleep(2)
    say(f"{n} following; idle for {args.idle:.0f} s")
    as_is = await idle(server, args.idle)
    has_it, drawn, moves = [], [], []
    for m in range(args.moves):
        label = "Next ▶" if m % 2 == 0 else "◀ Previous"
        before = {id(s): set(s.drawn) for s in students}
        meter = Meter(server)
        pressed = time.perf_counter()
        await teacher.click(label)
        deadline = pressed + 300
        while time.perf_counter() < deadline and not all(
            set(s.drawn) - before[id(s)] for s in students
        ):
            broken = next((e for s in students if (e := s.failed()) is not None), None)
            if broken is not None:
                raise RuntimeError(f"a student's page stopped following: {broken!r}")
            await asyncio.sleep(0.05)
        moves.append(meter.spent())
        took = time.perf_counter() - pressed
        for s in students:
            new = sorted(set(s.drawn) - before[id(s)])
            if not new:
                raise RuntimeError(f"a student did not follow move {m + 1} within 300 s")
            has_it.append(s.got[new[0]] - pressed)
            drawn.append(s.drawn[new[0]] - pressed)
        p95s = percentile(drawn[-n:], 0.95), percentile(has_it[-n:], 0.95)
        say(f"move {m + 1}: every student has the slide after {took:.1f} s (p95 {p95s[0]:.2f} s; "
            f"the version {p95s[1]:.2f} s)")  # fmt: skip
        await asyncio.sleep(2)
    meter = Meter(server)
    answered = await asyncio.gather(*(s.answer(i) for i, s in enumerate(students)))
    answers = meter.spent()
    for s in students:
        await s.close()
    await teacher.close()
    followers.call_soon_threadsafe(followers.stop)
    sizes = [size for s in students for size in s.sizes]
    return Hall(n, len(server.servers), join, quiet, as_is, has_it, drawn, sizes, moves, answers,
                sum(answered))  # fmt: skip


def per_student_ms(spent: Spent, quiet: Spent, n: int) -> float:
    """Server CPU ms per student per second above the teacher-alone reference."""
    return (spent.server / spent.wall - quiet.server / quiet.wall) / n * 1000


def report(h: Hall) -> None:
    n = h.students
    idle_ms = per_student_ms(h.as_is, h.quiet, n)
    core = idle_ms * n / 10  # % of one core: ms per second / 1000 * 100
    join_ms = h.join.server / n * 1000
    has_p95, drawn_p95 = percentile(h.has_it, 0.95), percentile(h.drawn, 0.95)
    move_s = statistics.median(m.server for m in h.move)
    where = "one `attnlens serve` (SQLite"
    if h.replicas > 1:
        where = f"{h.replicas} replicas of `attnlens serve` on one Redis (sticky sessions"
    print(
        f"\n{n} students on {where}, {MODEL}; load {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores); server CPU from its processes, clients' CPU this process's"
    )
    print(f"reference: the teacher's page alone, {h.quiet.server / h.quiet.wall * 1000:.1f} ms "
          "of server CPU per second")  # fmt: skip
    print("| what | server | clients | target | |")
    print("| --- | --- | --- | --- | --- |")
    rows = [
        ("join, per student (CPU)", f"{join_ms:.1f} ms", f"{h.join.clients / n * 1000:.1f} ms",
         f"≤ {JOIN_TARGET_MS:.0f} ms", join_ms <= JOIN_TARGET_MS),
        ("idle, per student per second", f"{idle_ms:.3f} ms",
         f"{h.as_is.clients / h.as_is.wall / n * 1000:.3f} ms", f"≤ {IDLE_TARGET_MS} ms",
         idle_ms <= IDLE_TARGET_MS),
        (f"idle class of {n}, share of one core", f"{core:.1f} %", "", "≤ 10 % (at 300)",
         core <= 10 * n / 300),
        ("slide change → every student has the new version, p95 (median)",
         f"{has_p95:.2f} s ({statistics.median(h.has_it):.2f} s)", "",
         f"≤ {FOLLOW_TARGET_S:.0f} s", has_p95 <= FOLLOW_TARGET_S),
        ("slide change → every student has the new slide to draw, p95 (median)",
         f"{drawn_p95:.2f} s ({statistics.median(h.drawn):.2f} s)", "",
         f"≤ {FOLLOW_TARGET_S:.0f} s", drawn_p95 <= FOLLOW_TARGET_S),
        ("slide payload, per student (the same bytes for all)",
         f"{statistics.median(h.sizes) / 1000:.1f} KB", "", "", None),
        ("slide change, server CPU (median of moves)", f"{move_s:.1f} s",
         f"{statistics.median(m.clients for m in h.move):.1f} s", "", None),
        (f"{n} answers at once: all recorded within", f"{h.answers.wall:.1f} s", "",
         f"≤ {ANSWERS_TARGET_S:.0f} s", h.answers.wall <= ANSWERS_TARGET_S and h.answered == n),
        ("answer, per student (CPU)", f"{h.answers.server / n * 1000:.1f} ms",
         f"{h.answers.clients / n * 1000:.1f} ms", "", None),
    ]  # fmt: skip
    for what, server, clients, target, held in rows:
        mark = "" if held is None else ("✓" if held else "✗")
        print(f"| {what} | {server} | {clients} | {target} | {mark} |")
    print(f"answers in the store after the run: {h.answered} of {n}")
    held = drawn_p95 <= FOLLOW_TARGET_S
    print(f"{n} students {'held' if held else 'did not hold'} p95 ≤ {FOLLOW_TARGET_S:.0f} s: "
          f"{n / (os.cpu_count() or 1):.0f} students per core of this machine, the clients' "
          "own work on the same cores")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.class_follow")
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of each idle stretch")
    parser.add_argument("--moves", type=int, default=4, help="slide changes (even: ends back)")
    parser.add_argument("--batch", type=int, default=4, help="students joining at once")
    parser.add_argument("--replicas", type=int, default=1,
                        help="servers sharing one Redis (1: one server, SQLite)")  # fmt: skip
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="attnlens-class-follow-"))
    with class_store(folder, args.replicas) as store_url:
        store = open_store(store_url)
        made = store.create(ClassState("section3", SLIDE, {}))
        store.configure(made.code, made.key, 1000, 1000, False)
        store.close()  # the servers' stores are the only ones open while they run
        # Every student's page comes from this machine: with XSRF protection off each page
        # counts as a browser of its own (class_panel.this_client), as students' devices do.
        env = {**os.environ, "ATTNLENS_CLASS_STORE": store_url,
               "STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}  # fmt: skip
        with contextlib.ExitStack() as stack:
            servers = []
            for _ in range(args.replicas):
                port = free_port()
                command = serve_command(MODEL, port)
                servers.append(stack.enter_context(started("attnlens", command, port, env=env)))
            h = asyncio.run(hall(Replicas(servers), made.code, made.key, args.students, args))
        store = open_store(store_url)
        state = store.state(made.code)
        if state is not None and state.question_id is not None:
            h.answered = sum(store.counts(made.code, state.question_id, 4))
        store.close()
    report(h)


@contextlib.contextmanager
def class_store(folder: Path, replicas: int) -> Iterator[str]:
    """The store's URL: a SQLite file for one server; for several, a redis-server of its own
    (every write on disk before it answers, as docs/deploying.md runs it), stopped after."""
    if replicas == 1:
        yield f"sqlite:///{folder / 'classes.sqlite3'}"
        return
    with redis_server(folder) as url:
        yield url


if __name__ == "__main__":
    main()
