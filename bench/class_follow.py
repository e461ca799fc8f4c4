"""What a class costs the server while it follows: server CPU per student joining, and per
student per second while the class looks at one slide (issue 37), measured from the server
process, with no browser on the machine.

A student's page, idle, costs the server two things: its browser fetches the class's version
file every BROWSER_POLL_MS (board.py; a static file, no script run), and its "still here"
fragment reruns every SEEN_SECONDS. The first is measured here with plain HTTP clients fetching
the file as the page does; the second needs a client that reruns the page's fragment over
Streamlit's websocket and is not measured (the issue's 300-student websocket bench). Joining is
measured with bench/session.py's websocket client opening the join link, as a browser's first
page load does (every page its own browser: the server runs with XSRF protection off, so the
per-browser limit does not count them as one).

    python -m bench.class_follow [--students 20] [--pollers 40] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from attnlens.app.teaching.board import BROWSER_POLL_MS
from attnlens.app.teaching.class_state import ClassState
from attnlens.app.teaching.class_store import open_store
from bench.servers import Server, started
from bench.session import Session
from tests.helpers.server import free_port, serve_command

MODEL = "translate"  # the lecture's model
FOLLOW = "/component/attnlens.app.web.lecture.resources.attnlens_follow/{code}.json"


def cpu_per(server: Server, seconds: float) -> float:
    """Server CPU seconds spent over `seconds` of wall time."""
    before = server.cpu_seconds()
    time.sleep(seconds)
    return server.cpu_seconds() - before


async def join(server: Server, code: str, students: int) -> float:
    """Server CPU seconds per student opening the join link (each page's first run whole)."""
    sessions = []
    before = server.cpu_seconds()
    for _ in range(students):
        page = Session(server.url, {"class": code})
        await page.open()
        sessions.append(page)
    spent = server.cpu_seconds() - before
    for page in sessions:
        await page.close()
    return spent / students


def poll(url: str, every_s: float, until: float, counts: list[int]) -> None:
    """One student's browser reading its class's version file every `every_s`, kept alive."""
    parts = urlparse(url)
    conn = http.client.HTTPConnection(parts.netloc, timeout=30)
    done = 0
    while time.monotonic() < until:
        conn.request("GET", f"{parts.path}?t={time.time_ns()}")
        reply = conn.getresponse()
        reply.read()
        if reply.status != 200:
            raise RuntimeError(f"{url} answered {reply.status}")
        done += 1
        time.sleep(every_s)
    counts.append(done)
    conn.close()


def idle(
    server: Server, url: str, pollers: int, every_s: float, seconds: float
) -> tuple[float, int]:
    """Server CPU seconds per second with `pollers` students polling, and the fetches made."""
    until = time.monotonic() + seconds
    counts: list[int] = []
    threads = [threading.Thread(target=poll, args=(url, every_s, until, counts))
               for _ in range(pollers)]  # fmt: skip
    before = server.cpu_seconds()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return (server.cpu_seconds() - before) / seconds, sum(counts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.class_follow")
    parser.add_argument("--students", type=int, default=20, help="students joining")
    parser.add_argument("--pollers", type=int, default=40, help="students idle, polling")
    parser.add_argument("--seconds", type=float, default=10.0, help="of each idle measurement")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="attnlens-class-follow-"))
    store_url = f"sqlite:///{folder / 'classes.sqlite3'}"
    env = {**os.environ, "ATTNLENS_CLASS_STORE": store_url,
           "STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}  # fmt: skip
    port = free_port()
    store = open_store(store_url)
    made = store.create(ClassState("section3", 0, {}))
    store.configure(made.code, made.key, 1000, 1000, False)
    with started("attnlens", serve_command(MODEL, port), port, env=env) as server:
        asyncio.run(join(server, made.code, 2))  # the model loaded, the slide built
        per_join = asyncio.run(join(server, made.code, args.students))
        url = server.url + FOLLOW.format(code=made.code)
        quiet = cpu_per(server, args.seconds) / args.seconds
        rows = []
        health = server.url + "/_stcore/health"  # the reference: Streamlit's barest request
        for name, target, every_ms in (
            ("version file", url, BROWSER_POLL_MS),
            ("version file", url, 1000),
            ("reference: /_stcore/health", health, BROWSER_POLL_MS),
        ):
            busy, fetches = idle(server, target, args.pollers, every_ms / 1000, args.seconds)
            per_fetch = (busy - quiet) * args.seconds / fetches
            rows.append((name, every_ms, (busy - quiet) / args.pollers, per_fetch))  # fmt: skip
    store.close()
    print(f"load {os.getloadavg()[0]:.1f}; {MODEL}; server CPU, measured from its process")
    print(f"join (page's first run, {args.students} students): {per_join * 1000:.0f} ms each")
    print(f"idle class, no pollers: {quiet * 1000:.1f} ms per second")
    print(f"| {args.pollers} students fetch | every | per student per second | per fetch | ratio |")
    print("| --- | --- | --- | --- | --- |")
    reference = rows[-1][3]
    for name, every_ms, per_student, per_fetch in rows:
        print(f"| {name} | {every_ms} ms | {per_student * 1000:.2f} ms | "
              f"{per_fetch * 1000:.2f} ms | {per_fetch / reference:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
