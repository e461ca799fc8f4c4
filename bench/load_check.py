"""A class on one machine: N sessions typing at once into one `attnlens serve`.

Each session opens Explore on `reverse` and types a new text about once a second (the next
keystroke waits for the last one's heatmap, as a student would), its own texts only, and checks
that the heatmap it gets back shows its own text: a session shown another's result would never
see its labels, and is counted. N grows (1, 2, 4, 8, 12, 16, 24, 32, 48) until the 95th
percentile of keystroke → heatmap passes 1 s; the largest N that held is the class size this
machine serves, and N per core the figure to scale by.

The sessions speak Streamlit's own websocket protocol (bench/session.py), so the server does
exactly what it does for a browser tab, while the drawing, which a class does on each
student's own machine, is left out: N Chromium tabs on the server's two cores would measure
the browsers, not the server. The client's own CPU is printed beside the server's.

The server runs as `attnlens serve` starts by default: on two cores or more, its traces are
made in one worker process (ATTNLENS_TRACE_WORKERS, app/server/trace_workers.py). --trace-workers 0
makes them in the server, as it did before that was the default.

    .venv/bin/python -m bench.load_check [--model reverse] [--keystrokes 8] [--sessions 1 4 8]
        [--trace-workers 0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import string
import time
from dataclasses import dataclass

from attnlens.app.web.resources import default_trace_workers
from attnlens.viz.shared.labels import position_labels
from bench.servers import Server, attnlens_server
from bench.session import Session

LEVELS = (1, 2, 4, 8, 12, 16, 24, 32, 48)
KEYSTROKES = 8
INTERVAL = 1.0  # seconds between one session's keystrokes
TARGET_P95 = 1.0  # seconds
TARGET_N = 16


@dataclass(frozen=True)
class Level:
    """N sessions typing: every keystroke's latency, and what it cost."""

    sessions: int
    latencies: list[float]  # seconds, keystrokes whose heatmap came back
    missed: int  # keystrokes whose own heatmap never came (wrong text, or timed out)
    server_cpu: float  # seconds of server CPU over the level
    client_cpu: float  # seconds of this process's CPU (the simulated sessions)
    wall: float  # seconds the typing took

    @property
    def p95(self) -> float:
        if self.missed or not self.latencies:
            return float("inf")
        return percentile(self.latencies, 0.95)

    @property
    def keystrokes(self) -> int:
        return len(self.latencies) + self.missed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def text_for(rng: random.Random) -> str:
    """A fresh 12-letter text (the reverse model reads lowercase letters)."""
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(12))


async def typist(
    session: Session, seed: int, offset: float, keystrokes: int, out: list[float | None]
) -> None:
    """Type `keystrokes` new texts, one a second from `offset`, each waiting for the last."""
    rng = random.Random(seed)
    start = time.perf_counter() + offset
    for k in range(keystrokes):
        await asyncio.sleep(max(0.0, start + k * INTERVAL - time.perf_counter()))
        text = text_for(rng)
        out.append(await session.type_text(text, position_labels([*text, "</s>"])))


async def level(server: Server, model: str, n: int, keystrokes: int) -> Level:
    sessions = [Session(server.url, {"page": "explore", "model": model}) for _ in range(n)]
    for s in sessions:  # opened one by one: a class arrives over a minute, not in one instant
        await s.open()
    results: list[float | None] = []
    cpu, client, wall = server.cpu_seconds(), time.process_time(), time.perf_counter()
    await asyncio.gather(
        *(
            typist(s, 1000 * n + i, i * INTERVAL / n, keystrokes, results)
            for i, s in enumerate(sessions)
        )
    )
    wall, cpu = time.perf_counter() - wall, server.cpu_seconds() - cpu
    client = time.process_time() - client
    for s in sessions:
        await s.close()
    shown = [r for r in results if r is not None]
    return Level(n, shown, len(results) - len(shown), cpu, client, wall)


def sweep(
    model: str, levels: tuple[int, ...], keystrokes: int, trace_workers: int | None = None
) -> list[Level]:
    """Levels in turn until one misses the p95 target (that one is reported too); traces in
    `trace_workers` worker processes (ATTNLENS_TRACE_WORKERS), in the server (0), or as the
    server decides by default (None)."""
    out = []
    with attnlens_server(model, trace_workers) as server:
        asyncio.run(level(server, model, 1, 2))  # load the model and warm the page
        for n in levels:
            found = asyncio.run(level(server, model, n, keystrokes))
            out.append(found)
            print(f"  load check: {n} sessions, p95 {found.p95:.2f} s", flush=True)
            if found.p95 > TARGET_P95:
                break
    return out


def largest_held(levels: list[Level]) -> int:
    held = [lv.sessions for lv in levels if lv.p95 <= TARGET_P95]
    return max(held, default=0)


def table(levels: list[Level], model: str, trace_workers: int | None = None) -> str:
    cores = os.cpu_count() or 1
    workers = default_trace_workers(cores) if trace_workers is None else trace_workers
    where = f"{workers} trace worker(s)" if workers else "traces in the server"
    if trace_workers is None:
        where = f"as started by default: {where}"
    rows = [
        f"load check: N sessions typing into one `attnlens serve --model {model}` ({where}), "
        f"one keystroke each per second ({cores} cores); server CPU counts its workers'",
        f"{'N':>3} {'keys':>5} {'median s':>9} {'p95 s':>7} {'missed':>7} "
        f"{'server CPU/key ms':>18} {'server CPU %':>13} {'client CPU %':>13}",
    ]
    for lv in levels:
        median = statistics.median(lv.latencies) if lv.latencies else float("inf")
        per_key = lv.server_cpu / max(1, lv.keystrokes) * 1000
        rows.append(
            f"{lv.sessions:>3} {lv.keystrokes:>5} {median:>9.3f} {lv.p95:>7.3f} {lv.missed:>7} "
            f"{per_key:>18.0f} {lv.server_cpu / lv.wall * 100:>12.0f}% "
            f"{lv.client_cpu / lv.wall * 100:>12.0f}%"
        )
    n = largest_held(levels)
    rows.append(f"largest N with p95 ≤ {TARGET_P95:g} s: {n} ({n / cores:g} sessions per core)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="reverse")
    parser.add_argument("--keystrokes", type=int, default=KEYSTROKES)
    parser.add_argument("--sessions", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument(
        "--trace-workers", type=int, default=None,
        help="ATTNLENS_TRACE_WORKERS for the server (default: the server's own default, one on"
        " two cores or more; 0: traces in the server)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    levels = sweep(args.model, tuple(args.sessions), args.keystrokes, args.trace_workers)
    print(table(levels, args.model, args.trace_workers))


if __name__ == "__main__":
    main()
