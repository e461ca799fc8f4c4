"""Work a page needs once, timed in Chromium against `attnlens serve` (issue 49):

- the Heads page on a model the server has never measured (an empty experiment cache), GPT-2
  small's shape × 1,024 tokens, reached by its link in the sidebar from Explore on the same text:
  from the click to the statistics table and to a progress line (≤ 2 s), and to the page done
  and quiet, usable (≤ 30 s); before this issue the page
  measured induction with every head ablated, 200.8 s on the same shape (the issue's number,
  load 2-6; 310 s of one core in this bench's own run of it, `--reference`);
- the Llama-3.2-1B shape × 4,000 tokens on Explore: its link opened in a new browser session
  after the first session closed (the server keeps no session's trace in memory then) → the
  head's overview drawn (≤ 3 s, where tracing it again took 33 s), and the server's CPU
  meanwhile (a new trace would cost it seconds of CPU, reading the record back a fraction).

    .venv/bin/python -m bench.first_visits [--reference]

The models are built here with random weights (bench/long_inputs.py: hidden sizes shrunk for the
CPU); the server runs with an experiment cache and trace shelf of its own, emptied first.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench import servers
from bench.browser import launch
from bench.long_inputs import GPT2, LLAMA, build, text_of
from bench.targets import Target, load_average, table
from tests.helpers.browser import settle
from tests.helpers.server import free_port, serve_command

ISSUE_HEADS_S = 200.8  # the Heads page's first visit on GPT-2 small's shape, as issue 49 measured
HEADS_TOKENS, LLAMA_TOKENS = 1024, 4000
LIMIT_S = 600.0
SHOWN = {
    "table": "[data-testid='stDataFrame']",
    "progress": "[data-testid='stProgress']",  # the induction scores' bar
}
OVERVIEW = """() => Array.from(document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))
  .some((h) => h.shadowRoot && h.shadowRoot.querySelector('canvas.hz-canvas[data-drawn]'))"""


def served(folder: Path, cache: Path) -> Any:
    """`attnlens serve` on the model, its experiment cache and trace shelf in `cache`."""
    port = free_port()
    env = {"ATTNLENS_CACHE_DIR": str(cache)}
    return servers.started("attnlens", serve_command(str(folder), port), port, LIMIT_S, env)


def heads_visit(browser: Any, url: str) -> dict[str, float]:
    """Explore on the long text (the model loaded and the text traced, as a user arrives),
    then the Heads link in the sidebar clicked: seconds from the click to the statistics
    table, to the first progress line, and to the page done and quiet."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    query = urlencode({"page": "explore", "text": text_of(HEADS_TOKENS - 1)})
    page.goto(f"{url}/?{query}", timeout=LIMIT_S * 1000)
    page.wait_for_function(OVERVIEW, timeout=LIMIT_S * 1000, polling=100)
    settle(page, timeout=int(LIMIT_S * 1000))
    nav = page.locator('[data-testid="stSidebarNav"]')
    started = time.perf_counter()
    nav.get_by_text("Heads", exact=True).click()
    seen: dict[str, float] = {}
    done = page.get_by_text("sharpest induction head")  # the scores drawn: no bar any more
    while len(seen) < len(SHOWN) and time.perf_counter() - started < LIMIT_S:
        for name, selector in SHOWN.items():
            if name not in seen and page.locator(selector).count():
                seen[name] = time.perf_counter() - started
        if done.count():
            break
        time.sleep(0.05)
    seen.setdefault("progress", float("inf"))  # never seen: the scores came at once
    settle(page, quiet_ms=1500, timeout=int(LIMIT_S * 1000))
    seen["usable"] = time.perf_counter() - started - 1.5
    context.close()
    return seen


def reopened(browser: Any, url: str, server: Any) -> dict[str, float]:
    """The long link traced in one session, that session closed, then opened in another:
    seconds to its overview and the server's CPU meanwhile, each time."""
    query = urlencode({"page": "explore", "text": text_of(LLAMA_TOKENS - 1)})
    out: dict[str, float] = {}
    for visit in ("first", "again"):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        cpu, started = server.cpu_seconds(), time.perf_counter()
        page.goto(f"{url}/?{query}", timeout=LIMIT_S * 1000)
        page.wait_for_function(OVERVIEW, timeout=LIMIT_S * 1000, polling=50)
        out[visit] = time.perf_counter() - started
        out[f"{visit}_cpu"] = server.cpu_seconds() - cpu
        settle(page, timeout=int(LIMIT_S * 1000))
        context.close()
        time.sleep(8.0)  # the session's records released (session_records.py) and collected
    return out


def bare_fresh_tab(browser: Any) -> float:
    """Seconds for the bare Streamlit page (bench/minimal_app.py) opened in a fresh browser
    session until its chart is drawn: what a new session costs before any of attnlens's work
    (the reopened link's time holds it too)."""
    with servers.bare_server() as bare:
        warm = browser.new_context()
        warm.new_page().goto(f"{bare.url}/?text=warm", timeout=LIMIT_S * 1000)
        warm.pages[0].wait_for_selector(".js-plotly-plot .main-svg", timeout=LIMIT_S * 1000)
        warm.close()
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        context.new_page().goto(f"{bare.url}/?text=fresh", timeout=LIMIT_S * 1000)
        context.pages[0].wait_for_selector(".js-plotly-plot .main-svg", timeout=LIMIT_S * 1000)
        seconds = time.perf_counter() - started
        context.close()
    return seconds


def reference_seconds(folder: Path) -> float:
    """The induction experiment with every head ablated, as the Heads page ran it before."""
    import attnlens
    from attnlens.analysis.experiments.induction import measure_induction

    started = time.perf_counter()
    measure_induction(attnlens.load(str(folder)), 100, 0)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", action="store_true", help="time the old way too (5 min)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        gpt2 = build(GPT2, HEADS_TOKENS, Path(tmp) / "gpt2")
        llama = build(LLAMA, LLAMA_TOKENS + 96, Path(tmp) / "llama")
        browser = launch(p)
        with served(gpt2, Path(tmp) / "cache-gpt2") as ours:
            heads = heads_visit(browser, ours.url)
        with served(llama, Path(tmp) / "cache-llama") as ours:
            again = reopened(browser, ours.url, ours)
        bare = bare_fresh_tab(browser)
        browser.close()
        old = reference_seconds(gpt2) if args.reference else None
    print(f"{GPT2.name} × {HEADS_TOKENS:,} on Heads from Explore, a model never measured: table "
          f"{heads['table']:.1f} s, progress line {heads['progress']:.1f} s, done "
          f"{heads['usable']:.1f} s (issue 49: {ISSUE_HEADS_S} s"
          + (f"; every head ablated, in this run: {old:.0f} s)" if old else ")"))  # fmt: skip
    print(f"{LLAMA.name} × {LLAMA_TOKENS:,} on Explore: first session {again['first']:.1f} s "
          f"({again['first_cpu']:.1f} s of server CPU); its link in a new session "
          f"{again['again']:.1f} s ({again['again_cpu']:.1f} s of CPU); the bare Streamlit "
          f"page in a new session: {bare:.1f} s")  # fmt: skip
    print(table([
        Target("Heads, new model: table and a progress line", max(heads["table"],
               heads["progress"]), 2.0),
        Target("Heads, new model: done, usable", heads["usable"], 30.0),
        Target("Long link reopened in a new session → overview", again["again"], 3.0),
    ]))  # fmt: skip
    print(load_average(), f"; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
