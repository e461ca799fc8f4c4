"""App latency: from pressing Enter in the text box to the updated heatmap on the page.

Playwright drives Debian's Chromium (never a downloaded browser) against two servers started
here: `attnlens serve` on the bundled default model (Explore page) and a minimal Streamlit page
with one text box and one Plotly heatmap (bench/minimal_app.py). For each input length, the
median over REPEATS fresh texts of: press Enter → the first heatmap's key labels are the new
text's. Both servers run at once and are measured in alternation (A B, B A, …), so the
machine's other load falls on both alike. Target (issue 6): ours ≤ 1.5× the minimal page.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import string
import sys
import time
from pathlib import Path
from typing import Any

from attnlens.viz.labels import position_labels
from tests.helpers.server import CHROMIUM_ARGS, free_port, running

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (8, 32, 60)
REPEATS = 7
TARGET = 1.5
HEATMAP_X = (
    "() => { const p = document.querySelector('.js-plotly-plot');"
    " return p && p.data ? JSON.stringify(p.data[0].x) : null; }"
)


class Page:
    """One browser tab on one server, ready to time a text change."""

    def __init__(self, browser: Any, url: str, alphabet: str, seed: int) -> None:
        self.tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.tab.goto(url, timeout=60_000)
        self.tab.wait_for_function(HEATMAP_X, timeout=60_000)
        self.box = self.tab.get_by_label("Text", exact=True)
        self.alphabet, self.rng = alphabet, random.Random(seed)

    def time_one(self, n: int) -> float:
        """Seconds from Enter to the first heatmap's key labels being a new n-character text's."""
        text = "".join(self.rng.choice(self.alphabet) for _ in range(n))
        want = json.dumps(position_labels([*text, "</s>"]))
        self.tab.bring_to_front()  # a background tab's animation frames are throttled
        self.box.fill(text)
        start = time.perf_counter()
        self.box.press("Enter")
        self.tab.wait_for_function(
            f"() => ({HEATMAP_X})() === JSON.stringify({want})", timeout=60_000
        )
        return time.perf_counter() - start


def run(
    model_name: str, lengths: tuple[int, ...], repeats: int, alphabet: str
) -> dict[str, dict[int, list[float]]]:
    """Both servers up at once and measured in alternation, so both see the same load."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("app_latency needs Debian's chromium (apt-get install chromium)")
    ours_port, base_port = free_port(), free_port()
    ours = [
        sys.executable,
        "-m",
        "attnlens.app.cli",
        "serve",
        "--port",
        str(ours_port),
        "--model",
        model_name,
    ]
    base = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "bench" / "minimal_app.py"),
        "--server.port", str(base_port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    results: dict[str, dict[int, list[float]]] = {"minimal": {}, "attnlens": {}}
    with (
        running(base, base_port) as base_url,
        running(ours, ours_port) as ours_url,
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            pages = {
                "minimal": Page(browser, base_url, alphabet, 0),
                "attnlens": Page(browser, ours_url, alphabet, 0),
            }
            for n in lengths:
                for name, page in pages.items():
                    page.time_one(n)  # warm-up at this length
                    results[name][n] = []
                for i in range(repeats):
                    order = list(pages) if i % 2 == 0 else list(pages)[::-1]
                    for name in order:
                        results[name][n].append(pages[name].time_one(n))
        finally:
            browser.close()
    return results


def table(results: dict[str, dict[int, list[float]]], model_name: str) -> str:
    repeats = len(next(iter(results["minimal"].values())))
    rows = [
        f"app latency: Enter → updated heatmap, median of {repeats} (Explore on {model_name!r})",
        f"{'tokens':>7} {'minimal ms':>11} {'attnlens ms':>12} {'ratio':>6}  target ≤ {TARGET}×",
    ]
    for n in results["minimal"]:
        base = statistics.median(results["minimal"][n]) * 1000
        ours = statistics.median(results["attnlens"][n]) * 1000
        ratio = ours / base
        verdict = "ok" if ratio <= TARGET else "over"
        rows.append(f"{n + 1:>7} {base:>11.0f} {ours:>12.0f} {ratio:>6.2f}  {verdict}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="reverse", help="model for the Explore page")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--alphabet", default=string.ascii_lowercase, help="input characters")
    args = parser.parse_args(argv)
    results = run(args.model, tuple(args.lengths), args.repeats, args.alphabet)
    print(table(results, args.model))


if __name__ == "__main__":
    main()
