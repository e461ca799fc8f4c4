"""Where one rerun's server time goes: model call, figure build, serialisation, the rest of the
script (Streamlit's widgets and elements, our page code), garbage collection, and the page's
pause for the browser (time, not CPU).

The real pages run in Streamlit's AppTest in this process, with the model loaded as the server
loads it (app/web/resources.py: one torch thread) and Streamlit configured as `attnlens serve` runs
it (app/cli/main.py STREAMLIT_OPTIONS: no forced collection after each rerun), and every phase is
timed by wrapping what does it: the lens's `trace` (model call), every `attnlens.viz` figure
function and the app's figure helpers (figure build), `plotly.io.to_json` and the copy
`st.plotly_chart` takes of a figure (serialisation); every garbage collection during the rerun,
Python's own included, through `gc.callbacks`. Times are exclusive (a phase inside another counts
once) and wall-clock medians over a few reruns.

    .venv/bin/python -m bench.breakdown [--repeats 5]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import os
import random
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import plotly.io
import plotly.tools

import attnlens
from attnlens.app.cli.serve import STREAMLIT_OPTIONS
from attnlens.app.web import click_targets, show
from attnlens.app.web import resources as state
from bench.app_latency import WORDS
from bench.servers import in_server_environment
from bench.threads import seconds_all_done

ROOT = Path(__file__).resolve().parents[1]
APP_SCRIPT = str(ROOT / "app" / "web" / "main.py")
PHASES = (
    "model call",
    "figure build",
    "serialisation",
    "rest of script",
    "garbage collection",
    "pause for the browser",
)


class Clock:
    """Exclusive time per phase (time in an inner phase is not counted in the outer), on the
    wall clock and as CPU time of the thread doing it (which other load does not inflate)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self._local = threading.local()  # per thread: [phase, wall, cpu, inner wall, inner cpu]

    def collection(self, what: str, info: dict[str, int]) -> None:
        """A gc callback: each collection in a phase's thread counts as garbage collection,
        and not in the phase it interrupted."""
        if what == "start":
            self._local.gc = (time.perf_counter(), time.thread_time())
            return
        started = getattr(self._local, "gc", None)
        if started is None:
            return
        wall, cpu = time.perf_counter() - started[0], time.thread_time() - started[1]
        self.wall["garbage collection"] += wall
        self.cpu["garbage collection"] += cpu
        stack = self._stack()
        if stack:
            stack[-1][3] += wall
            stack[-1][4] += cpu
        self._local.gc = None

    def clear(self) -> None:
        self.wall.clear()
        self.cpu.clear()

    def _stack(self) -> list[list[Any]]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack  # type: ignore[no-any-return]

    def timed(self, phase: str, fn: Callable[..., Any], nested: bool = False) -> Callable[..., Any]:
        """fn, timed as phase; nested: only inside another phase (AppTest's own waiting is not
        in any phase)."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            stack = self._stack()
            if nested and not stack:
                return fn(*args, **kwargs)
            stack.append([phase, time.perf_counter(), time.thread_time(), 0.0, 0.0])
            try:
                return fn(*args, **kwargs)
            finally:
                _, wall0, cpu0, inner_wall, inner_cpu = stack.pop()
                wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
                self.wall[phase] += wall - inner_wall
                self.cpu[phase] += cpu - inner_cpu
                if stack:
                    stack[-1][3] += wall
                    stack[-1][4] += cpu

        return wrapper


@contextlib.contextmanager
def instrumented(clock: Clock, lens: attnlens.Lens) -> Iterator[None]:
    """Wrap every phase's functions for the duration of the block."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    from attnlens import viz

    patches: list[tuple[Any, str, Any]] = [(lens, "trace", "model call")]
    patches += [(viz, name, "figure build") for name in viz.__all__]
    patches += [(click_targets, n, "figure build") for n in ("clickable",)]
    patches += [(show, "styled", "figure build")]
    patches += [(plotly.io, "to_json", "serialisation")]
    patches += [(plotly.tools, "return_figure_from_figure_or_data", "serialisation")]
    patches += [(ScriptRunner, "_run_script", "rest of script")]  # the whole run, exclusive
    # AppTest compiles the page on every run (a fresh ScriptCache); the server compiles once
    patches += [(ScriptCache, "get_bytecode", "compiling (AppTest only)")]
    saved = []
    for owner, name, phase in patches:
        if hasattr(owner, name):
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, clock.timed(phase, getattr(owner, name)))
    saved.append((time, "sleep", time.sleep))  # the page's pause for the browser
    time.sleep = clock.timed("pause for the browser", time.sleep, nested=True)  # type: ignore[assignment]
    gc.callbacks.append(clock.collection)
    try:
        yield
    finally:
        gc.callbacks.remove(clock.collection)
        for owner, name, original in reversed(saved):
            if owner is lens:
                delattr(owner, name)  # back to the class's method
            else:
                setattr(owner, name, original)


@dataclass(frozen=True)
class Rerun:
    """One rerun's phases in seconds, in the thread that runs the script (AppTest's own waiting
    is left out): wall clock and CPU."""

    wall: dict[str, float]
    cpu: dict[str, float]


def timed_run(clock: Clock, run: Callable[[], Any]) -> Rerun:
    """One rerun, and after it the full collection the server would run after every rerun
    (AppTest leaves it out) if its configuration asked for one (serve's does not)."""
    from streamlit import config

    clock.clear()
    at = run()
    if config.get_option("runner.postScriptGC"):
        gc.collect(2)  # seen by the gc callback
    if at.exception:
        raise RuntimeError(f"the page failed: {at.exception[0].value}")
    return Rerun(
        {p: clock.wall.get(p, 0.0) for p in PHASES}, {p: clock.cpu.get(p, 0.0) for p in PHASES}
    )


def scenario(
    model: str, page: str, edits: Callable[[Any, int], Any], repeats: int, app: str = APP_SCRIPT
) -> list[Rerun]:
    """The page on model, then `repeats` reruns each made by edits(at, i) (which returns the
    AppTest to run); the first rerun is a warm-up."""
    from streamlit.testing.v1 import AppTest

    serve_options()
    lens = state.shared_lens(model)
    at = AppTest.from_file(app, default_timeout=300)
    at.query_params.update({"page": page, "model": model})
    at.run()
    clock = Clock()
    out = []
    with instrumented(clock, lens):
        for i in range(repeats + 1):
            rerun = timed_run(clock, partial(_rerun, edits, at, i))
            if i:
                out.append(rerun)
    return out


def serve_options() -> None:
    """Streamlit's configuration in this process as `attnlens serve` sets it."""
    from streamlit import config

    options = STREAMLIT_OPTIONS
    for name, value in zip(options[::2], options[1::2], strict=True):
        key = name.removeprefix("--")
        parsed: object = {"true": True, "false": False}.get(value, value)
        config.set_option(key, parsed)


def _rerun(edits: Callable[[Any, int], Any], at: Any, i: int) -> Any:
    return edits(at, i).run()


def new_text(words: int | None = None, chars: int | None = None) -> Callable[[Any, int], Any]:
    """Type a fresh text each rerun: random words (minilm) or letters (character models)."""
    rng = random.Random(7)

    def edit(at: Any, i: int) -> Any:
        if words is not None:
            text = " ".join(rng.choice(WORDS) for _ in range(words))
        else:
            text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(chars or 8))
        return at.text_input(key="w_text").input(text)

    return edit


def other_head(n_heads: int) -> Callable[[Any, int], Any]:
    def edit(at: Any, i: int) -> Any:
        return at.selectbox(key="w_head").select(1 + i % (n_heads - 1))

    return edit


def thread_rows(repeats: int = 3) -> list[tuple[str, int, float, float]]:
    """(input, torch threads, seconds for one trace alone, seconds each when two sessions trace
    at once): the case for one intra-op thread per request on a small machine."""
    import torch

    cores = os.cpu_count() or 1
    rng = random.Random(3)
    cases = {
        "reverse, 63 tokens": ("reverse", lambda: random_letters(rng, 62)),
        "minilm, 512 tokens": ("minilm", lambda: " ".join(rng.choice(WORDS) for _ in range(510))),
    }
    out = []
    for name, (model, text) in cases.items():
        lens = state.shared_lens(model)
        timings: dict[int, tuple[list[float], list[float]]] = {1: ([], []), cores: ([], [])}
        for _ in range(repeats):
            for threads in timings:
                torch.set_num_threads(threads)
                timings[threads][0].append(_traced(lens, [text()]))
                timings[threads][1].append(_traced(lens, [text(), text()]))
        torch.set_num_threads(1)
        for threads, (alone, pair) in timings.items():
            out.append((name, threads, statistics.median(alone), statistics.median(pair)))
    return out


def _traced(lens: attnlens.Lens, texts: list[str]) -> float:
    """Seconds until every text is traced, each in its own thread, all at once."""
    return seconds_all_done([threading.Thread(target=lens.trace, args=(t,)) for t in texts])


def random_letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


def thread_table(rows: list[tuple[str, int, float, float]]) -> str:
    lines = [f"{'model call, median ms':<24} {'torch threads':>13} {'alone':>7} "
             f"{'two sessions at once':>21}"]  # fmt: skip
    for name, threads, alone, pair in rows:
        lines.append(f"{name:<24} {threads:>13} {alone * 1000:>7.0f} {pair * 1000:>21.0f}")
    return "\n".join(lines)


SCENARIOS: dict[str, tuple[str, str, Callable[[Any, int], Any]]] = {
    "Explore reverse, new text (31 tokens)": ("reverse", "explore", new_text(chars=30)),
    "Explore minilm, new text (32 tokens)": ("minilm", "explore", new_text(words=30)),
    "Explore minilm, new text (512 tokens)": ("minilm", "explore", new_text(words=510)),
    "Explore minilm, another head": ("minilm", "explore", other_head(12)),
}


def results(
    repeats: int, only: list[str] | None = None, app: str = APP_SCRIPT
) -> dict[str, list[Rerun]]:
    out = {}
    for name, (model, page, edit) in SCENARIOS.items():
        if only and not any(o in name for o in only):
            continue
        out[name] = scenario(model, page, edit, repeats, app)
        print(f"  breakdown: {name}: done", flush=True)
    return out


def table(found: dict[str, list[Rerun]], clock: str = "wall") -> str:
    """Median ms per phase for each scenario, on one clock ("wall" or "cpu")."""
    what = "server time" if clock == "wall" else "server CPU"
    short = ("model", "figures", "serialise", "rest", "GC", "pause")  # PHASES, in order
    head = f"{what + ' per rerun, median ms':<40}" + "".join(f"{p:>10}" for p in short)
    rows = [head + f"{'total':>8}"]
    for name, reruns in found.items():
        spent = [getattr(r, clock) for r in reruns]
        cells = [statistics.median(s[p] for s in spent) * 1000 for p in PHASES]
        total = statistics.median(sum(s[p] for p in PHASES) for s in spent) * 1000
        rows.append(f"{name:<40}" + "".join(f"{c:>10.0f}" for c in cells) + f"{total:>8.0f}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    in_server_environment("bench.breakdown", argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="scenarios whose name contains any of these")
    parser.add_argument(
        "--app",
        default=APP_SCRIPT,
        help="the app script to measure: another checkout's app/web/main.py, run with PYTHONPATH "
        "pointing attnlens at that checkout, gives a before/after on the same machine",
    )
    args = parser.parse_args(argv)
    found = results(args.repeats, args.only, args.app)
    print(table(found, "wall"))
    print(table(found, "cpu"))
    if args.app == APP_SCRIPT:
        print(thread_table(thread_rows()))


if __name__ == "__main__":
    main()
