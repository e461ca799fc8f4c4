"""A wait the user sees: what runs, and how far it is, in place of what the page drew for the
last input.

While a script runs, Streamlit greys out what the last run drew and leaves it on the page: a long
input showed the previous result (its old continuation too) for half a minute as if it were the
answer to the new one. Here the work runs in a thread of its own while the script thread shows,
after SHOW_AFTER_S, one line in the page's slot (an st.empty that holds the page's body): what
runs, on how many tokens, the seconds so far and, once this server has made one as long on the
same model, about how long it takes. Putting an element in the slot drops the greyed body under
it at once. A user who changes the input meanwhile reruns the script; the work goes on in its
thread and lands in the shared caches, so it is not lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from attnlens.app.web.safe_text import md

T = TypeVar("T")
SHOW_AFTER_S = 0.5  # work quicker than this shows nothing (no flicker on a keystroke)
POLL_S = 0.25  # how often the line is redrawn
GROWTH = 1.5  # a trace's time grows about as tokens^1.5 (its forward linear, its maps T²)


@dataclass(frozen=True)
class Wait:
    """What runs ("Reading 4,001 tokens with gpt2"), and the seconds it is expected to take
    (None: not known yet)."""

    what: str
    expected_s: float | None = None

    def line(self, elapsed: float) -> tuple[str, float | None]:
        """The line shown after `elapsed` seconds, and the share done (None: not known)."""
        if self.expected_s is None or self.expected_s <= 0:
            return f"{self.what}: {elapsed:.0f} s so far …", None
        share = min(0.99, elapsed / self.expected_s)
        if elapsed > self.expected_s:
            return f"{self.what}: {elapsed:.0f} s, longer than the {self.expected_s:.0f} s "\
                "expected (the server is busy) …", share  # fmt: skip
        return f"{self.what}: {elapsed:.0f} s of about {self.expected_s:.0f} s …", share


class Speeds:
    """How long this server took for the longest work of each kind (a model's traces), so the
    next wait can say about how long it takes: (tokens, seconds) by name."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def note(self, name: str, tokens: int, seconds: float) -> None:
        with self._lock:
            self._seen[name] = (tokens, seconds)

    def expected(self, name: str, tokens: int, growth: float = GROWTH) -> float | None:
        """Seconds for `tokens`, scaled from the last measured as tokens^growth."""
        with self._lock:
            seen = self._seen.get(name)
        if seen is None or seen[0] <= 0 or tokens <= 0:
            return None
        return float(seen[1] * (tokens / seen[0]) ** growth)


@st.cache_resource(show_spinner=False)
def speeds() -> Speeds:
    """The server's Speeds, shared by every session."""
    return Speeds()


def waited(place: DeltaGenerator | None, wait: Wait, work: Callable[[], T]) -> T:
    """work()'s result (or its error), with `wait` shown in `place` for as long as it takes
    past SHOW_AFTER_S; `place` is emptied of it afterwards only by what the caller draws.
    Without a place, the line is drawn where the page is (only if it is needed) and emptied
    once the work is done."""
    if place is not None:
        return _waited(lambda: place, wait, work)
    made: list[DeltaGenerator] = []

    def here() -> DeltaGenerator:
        if not made:
            made.append(st.empty())
        return made[0]

    try:
        return _waited(here, wait, work)
    finally:
        if made:
            made[0].empty()


def _waited(place: Callable[[], DeltaGenerator], wait: Wait, work: Callable[[], T]) -> T:
    done: Future[T] = Future()
    ctx = get_script_run_ctx()

    def run() -> None:
        try:
            done.set_result(work())
        except BaseException as err:  # raised to the script thread, which shows it
            done.set_exception(err)

    thread = threading.Thread(target=run, name="attnlens-wait", daemon=True)
    add_script_run_ctx(thread, ctx)  # the shared caches it reads are Streamlit's
    thread.start()
    started = time.monotonic()
    while True:
        try:
            return done.result(timeout=POLL_S)
        except FutureTimeout:
            elapsed = time.monotonic() - started
            if elapsed >= SHOW_AFTER_S:
                _show(place(), *wait.line(elapsed))


def _show(place: DeltaGenerator, line: str, share: float | None) -> None:
    if share is None:
        place.info(md(line), icon=":material/hourglass_top:")
    else:
        place.progress(share, text=md(line))


def timed(name: str, tokens: int, work: Callable[[], T]) -> T:
    """work(), its time noted in speeds() under `name` for `tokens` when it took a while."""
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    if seconds >= SHOW_AFTER_S:
        speeds().note(name, tokens, seconds)
    return result
