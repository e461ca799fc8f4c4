"""A flood on the answer route (issue 45): one student's id posting answers as fast as FLOODERS
threads can, on one `attnlens serve` (SQLite store), while other students answer once each; how
long those other students wait for their answer, against the same students answering on the
same server with no flood (the reference, measured in the same run). Past its burst the flood is
refused (429) at a student's rate; the others should notice nothing.

    python -m bench.class_flood [--answers 30] [--flooders 8]

Target: the other students' answers within 0.1 s at the 95th percentile during the flood.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.targets import Target, table
from tests.helpers.classroom import class_asking, post_answer
from tests.helpers.server import free_port, running, serve_command

LIMIT_S = 0.1  # an answer during a flood, p95


def post(conn: http.client.HTTPConnection, code: str, me: str, choice: int) -> int:
    return post_answer(conn, code, me, choice)[0]


def timed(port: int, code: str, students: list[str]) -> list[float]:
    """Seconds each student's one answer took (a connection each, kept from before)."""
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in students]
    for conn in conns:
        conn.connect()
    seconds = []
    for conn, me in zip(conns, students, strict=True):
        start = time.perf_counter()
        status = post(conn, code, me, 1)
        seconds.append(time.perf_counter() - start)
        assert status == 200, status
        conn.close()
        time.sleep(0.05)
    return seconds


def flooding(port: int, code: str, me: str, threads: int, stop: threading.Event) -> list[int]:
    """Start `threads` threads posting as `me` until `stop`; the statuses they get."""
    got: list[int] = []

    def flood() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while not stop.is_set():
            got.append(post(conn, code, me, len(got) % 4))
        conn.close()

    for _ in range(threads):
        threading.Thread(target=flood, daemon=True).start()
    return got


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=30, help="other students, once each")
    parser.add_argument("--flooders", type=int, default=8, help="threads flooding as one id")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="attnlens-flood-") as folder:
        url = f"sqlite:///{Path(folder) / 'classes.sqlite3'}"
        made, ids = class_asking(url, 2 * args.answers + 2)
        port = free_port()
        command = [*serve_command("reverse", port), "--host", "127.0.0.1", "--class-store", url]
        with running(command, port):
            timed(port, made.code, ids[-1:])  # the store opened, the route warm
            quiet = timed(port, made.code, ids[: args.answers])
            stop = threading.Event()
            began = time.perf_counter()
            got = flooding(port, made.code, ids[-2], args.flooders, stop)
            time.sleep(1.0)
            loud = timed(port, made.code, ids[args.answers : 2 * args.answers])
            stop.set()
            flooded = time.perf_counter() - began
    print(f"the flood: {len(got)} answers in {flooded:.1f} s ({len(got) / flooded:.0f}/s), "
          f"{got.count(200)} taken, {got.count(429)} refused (429)")  # fmt: skip
    print(f"another student's answer: median {statistics.median(quiet) * 1000:.1f} ms quiet, "
          f"{statistics.median(loud) * 1000:.1f} ms during the flood")  # fmt: skip
    targets = [
        Target("answer during a flood, p95 (≤ 0.1 s)", p95(loud), LIMIT_S),
        Target("answer during a flood vs quiet, p95", p95(loud), 3.0, p95(quiet)),
    ]
    print(table(targets))
    return targets


if __name__ == "__main__":
    main()
