"""Memory benchmark (issue 17): N browser sessions at once on Explore with `minilm` at 510
tokens, each downloading every file the page offers: the record (NPZ; its JSON is refused
there, as too large to send within the budget, and the bench checks that its button is
disabled), the table of the shown head (CSV) and the heatmap (HTML), against one `attnlens
serve`. Reports the server's peak RSS against N, and its RSS
after the sessions close against the idle level; then the peak RSS of `attnlens trace`
writing the same record as JSON, CSV and NPZ.

Targets: peak ≤ idle + N × budget (the idle server holds the model's weights; the budget is
ATTNLENS_MAX_RECORD_MB), and back within 10% of idle after the sessions close. Idle is the
server after one session that drew the page and downloaded each file once: the first download
of each kind costs memory once per process (about 10 MB on minilm: the writers' modules and
tables; 40 MB before `attnlens serve` set the allocators, docs/deploying.md), not per
session; the idle level before it is printed too.

    .venv/bin/python -m bench.memory_load [--sessions 1 2 4] [--settle 20] [--skip-cli]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlens.model.budget import budget_bytes
from attnlens.model.lenses.registry import minilm_folder
from tests.helpers.memory import long_text, open_explore, reset_peak, served, status
from tests.helpers.server import CHROMIUM_ARGS, ROOT

MODEL = "minilm"
MB = 2**20
DOWNLOADS = (
    "Download record (JSON)", "Download record (NPZ)", "Download table (CSV)", "Figure (HTML)",
)  # fmt: skip
REFUSED = -2  # a download whose button is disabled (the file would pass the budget)


@dataclass(frozen=True)
class Row:
    n: int
    peak: int
    after: int
    sizes: dict[str, int]  # one session's downloads, bytes


async def one_session(browser: Any, url: str, downloads: bool) -> dict[str, int]:
    """Explore on the long text, then each download clicked in turn; the files' sizes (-1 for
    a download the browser canceled, REFUSED for a button the page disabled)."""
    from playwright.async_api import Error as PlaywrightError

    context = await open_explore(browser, url, MODEL, long_text(), 500)
    page = context.pages[0]
    sizes: dict[str, int] = {}
    for label in DOWNLOADS if downloads else ():
        button = page.get_by_role("button", name=label).first
        await button.scroll_into_view_if_needed()
        if await button.is_disabled():
            sizes[label] = REFUSED
            continue
        async with page.expect_download(timeout=900_000) as info:
            await button.click()
        download = await info.value
        try:
            sizes[label] = os.path.getsize(await download.path())
        except PlaywrightError:  # the browser gave up on it: counted, not a traceback
            sizes[label] = -1
    await context.close()
    return sizes


async def sessions(url: str, n: int, downloads: bool = True) -> list[dict[str, int]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=shutil.which("chromium"),
                                          args=CHROMIUM_ARGS)  # fmt: skip
        try:
            found = await asyncio.gather(*(one_session(browser, url, downloads) for _ in range(n)))
        finally:
            await browser.close()
    return list(found)


def settled(pid: int, seconds: float) -> int:
    """The server's RSS `seconds` after the last session closed."""
    time.sleep(seconds)
    return status(pid, "VmRSS")


def measure_app(counts: list[int], settle: float) -> tuple[int, int, list[Row]]:
    """(RSS with the model loaded and the page drawn once, idle RSS once each download was made
    once, one row per N)."""
    with served(MODEL) as (url, pid):
        asyncio.run(sessions(url, 1, downloads=False))  # load the model and draw once
        drawn = settled(pid, settle)
        asyncio.run(sessions(url, 1))  # each download made once: its one-time cost paid
        idle = settled(pid, settle)
        rows = []
        for n in counts:
            reset_peak(pid)
            sizes = asyncio.run(sessions(url, n))
            peak = status(pid, "VmHWM")
            rows.append(Row(n, peak, settled(pid, settle), sizes[0]))
        return drawn, idle, rows


def measure_cli() -> list[tuple[str, int, int, float]]:
    """(format, peak RSS, file size, seconds) of `attnlens trace minilm TEXT --format F`."""
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for fmt in ("json", "csv", "npz"):
            path = Path(folder) / f"trace.{fmt}"
            command = [sys.executable, "-m", "attnlens.app.cli.main", "trace", MODEL, long_text(),
                       "--format", fmt, "--out", str(path)]  # fmt: skip
            start = time.perf_counter()
            proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)  # fmt: skip
            _, _, usage = os.wait4(proc.pid, 0)
            proc.returncode = 0  # reaped by wait4
            took = time.perf_counter() - start
            size = path.stat().st_size if path.exists() else 0
            out.append((fmt, usage.ru_maxrss * 1024, size, took))
    return out


def print_app(drawn: int, idle: int, rows: list[Row]) -> None:
    budget = budget_bytes()
    folder = minilm_folder()
    weights = (folder / "model.safetensors").stat().st_size if folder else 0
    print(f"weights {weights / MB:.0f} MB, budget {budget / MB:.0f} MB, "
          f"server with the model loaded and the page drawn once {drawn / MB:.0f} MB, idle once "
          f"each download was made once {idle / MB:.0f} MB")  # fmt: skip
    print(f"{'N':>3} {'peak MB':>8} {'idle+N×budget':>14} {'peak-idle':>10} {'per session':>12} "
          f"{'after MB':>9} {'vs idle':>8}  downloads of one session (MB)")  # fmt: skip
    for r in rows:
        files = ", ".join(f"{k.split()[-1]} {_size(v)}" for k, v in r.sizes.items())
        print(f"{r.n:>3} {r.peak / MB:>8.0f} {(idle + r.n * budget) / MB:>14.0f} "
              f"{(r.peak - idle) / MB:>10.0f} {(r.peak - idle) / r.n / MB:>12.0f} "
              f"{r.after / MB:>9.0f} {(r.after - idle) / idle:>+8.1%}  {files}")  # fmt: skip


def _size(n: int) -> str:
    return "refused" if n == REFUSED else "canceled" if n < 0 else f"{n / MB:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--settle", type=float, default=20.0, help="seconds after closing")
    parser.add_argument("--skip-cli", action="store_true")
    args = parser.parse_args(argv)
    if shutil.which("chromium") is None or minilm_folder() is None:
        print("memory benchmark skipped: it needs Debian's chromium and the minilm package")
        return
    load = " ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"\nMemory: N sessions at once on Explore, {MODEL} at 510 tokens, each downloading "
          f"the record, CSV (shown head) and HTML (load average {load})")  # fmt: skip
    print_app(*measure_app(args.sessions, args.settle))
    if args.skip_cli:
        return
    print(f"\n`attnlens trace {MODEL} <510 tokens> --format F --out FILE`")
    print(f"{'format':>6} {'peak MB':>8} {'file MB':>8} {'seconds':>8}")
    for fmt, peak, size, took in measure_cli():
        print(f"{fmt:>6} {peak / MB:>8.0f} {size / MB:>8.1f} {took:>8.1f}")


if __name__ == "__main__":
    main()
