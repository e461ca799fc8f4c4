"""Load check (issue 8): N browser sessions typing at once into one `attnlens serve`.

Each session types its own texts into Explore and waits until the heatmap's source labels are
exactly its own text: a session shown another's result would never get there and is reported.
Prints median and 95th-percentile keystroke-to-chart latency for N = 1, 4, 8.

    .venv/bin/python -m bench.load_check [--model reverse] [--rounds 5] [--sessions 1 4 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import time
from dataclasses import dataclass
from typing import Any

from attnlens.viz.labels import position_labels
from tests.helpers.server import CHROMIUM_ARGS, serving

SOURCE_LABELS = (
    "() => { const p = document.querySelector('.js-plotly-plot');"
    " return p && p.data ? JSON.stringify(p.data[0].x) : null; }"
)


@dataclass(frozen=True)
class Result:
    sessions: int
    latencies: list[float]  # seconds, every keystroke of every session
    wrong: int  # sessions that did not end on their own text


def text_for(session: int, round_: int) -> str:
    """A text no other session types (letters and digits the bundled models all read)."""
    return f"s{session}r{round_}{'abcdefgh'[session % 8]}"


async def one_session(browser: Any, url: str, session: int, rounds: int, out: list[float]) -> bool:
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    await page.goto(f"{url}/?page=explore", timeout=120_000)
    await page.wait_for_function(SOURCE_LABELS, timeout=120_000)
    box = page.get_by_label("Text", exact=True)
    for r in range(rounds):
        text = text_for(session, r)
        expected = json.dumps(position_labels([*text, "</s>"]))
        await box.fill(text)
        start = time.perf_counter()
        await box.press("Enter")
        await page.wait_for_function(f"() => ({SOURCE_LABELS})() === JSON.stringify({expected})",
                                     timeout=120_000)  # fmt: skip
        out.append(time.perf_counter() - start)
    final = await page.evaluate(SOURCE_LABELS)
    await context.close()
    return bool(json.loads(final) == position_labels([*text_for(session, rounds - 1), "</s>"]))


async def measure(url: str, n: int, rounds: int) -> Result:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
        )
        latencies: list[float] = []
        own = await asyncio.gather(
            *(one_session(browser, url, i, rounds, latencies) for i in range(n))
        )
        await browser.close()
    return Result(n, latencies, sum(not ok for ok in own))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="reverse")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args(argv)
    if shutil.which("chromium") is None:
        print("load check skipped: Debian's chromium is not installed (make test installs it)")
        return
    print(f"\nLoad check: sessions typing at once into one `attnlens serve --model {args.model}`")
    print(f"{'N':>3} {'keystrokes':>10} {'median s':>9} {'p95 s':>7} {'own text':>9}")
    with serving(args.model) as url:
        asyncio.run(measure(url, 1, 1))  # warm the model and the page once
        for n in args.sessions:
            r = asyncio.run(measure(url, n, args.rounds))
            own = f"{n - r.wrong}/{n}"
            print(f"{n:>3} {len(r.latencies):>10} {statistics.median(r.latencies):>9.3f} "
                  f"{percentile(r.latencies, 0.95):>7.3f} {own:>9}")  # fmt: skip


if __name__ == "__main__":
    main()
