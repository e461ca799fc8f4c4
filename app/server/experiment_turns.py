"""Experiments on a public server (docs/deploying.md, "Experiments on a server"): a bound on n, one
experiment at a time per server process, in the order asked, and a rate per session. The command
line and `attnlens.experiment()` are not limited; a cached result is served to anyone at once."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from attnlens.analysis.experiments.common import Progress

T = TypeVar("T")

SERVER_MAX_N = 100  # the defaults (explanation 50): importance on reverse at n=100 is ~1 min
SERVER_INTERVAL_S = 60  # a session's next experiment starts this long after its last one ended
NICE = 10  # the run's thread yields the cores to keystrokes (bench/experiment_load.py)


@dataclass(frozen=True)
class ServerLimits:
    """What one visitor may ask of a server: n at most max_n, one run per interval_s."""

    max_n: int = SERVER_MAX_N
    interval_s: int = SERVER_INTERVAL_S

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ServerLimits:
        """ATTNLENS_EXPERIMENT_MAX_N and ATTNLENS_EXPERIMENT_INTERVAL_S, else the defaults."""
        env = os.environ if env is None else env
        return cls(
            _whole(env, "ATTNLENS_EXPERIMENT_MAX_N", SERVER_MAX_N, least=1),
            _whole(env, "ATTNLENS_EXPERIMENT_INTERVAL_S", SERVER_INTERVAL_S, least=0),
        )

    def n_refusal(self, n: int) -> str | None:
        """Why n is too many inputs for this server, in one line; None when it is not."""
        if n <= self.max_n:
            return None
        return (
            f"n={n} is more inputs than this server runs an experiment on: at most "
            f"{self.max_n} (the command line has no such limit)"
        )

    def rate_refusal(self, last_ended: float | None, now: float) -> str | None:
        """Why this session may not start another experiment yet, in one line; None if it may.
        last_ended: when its last experiment ended (time.monotonic()), None if it ran none."""
        if last_ended is None or now - last_ended >= self.interval_s:
            return None
        wait = max(1, round(self.interval_s - (now - last_ended)))
        return (
            f"this server starts one experiment per visitor every {self.interval_s} s after "
            f"the last one ended: the next can start in {wait} s"
        )


def _whole(env: Mapping[str, str], name: str, default: int, least: int) -> int:
    raw = env.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= least else default


class ExperimentQueue:
    """One experiment at a time, in the order asked: a visitor takes a ticket, waits until it is
    first in line, runs, and leaves (always, in a `finally`: a closed tab leaves too)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._line: list[int] = []  # tickets; the first is running
        self._issued = 0

    def join(self) -> int:
        """A new ticket at the end of the line."""
        with self._changed:
            self._issued += 1
            self._line.append(self._issued)
            return self._issued

    def place(self, ticket: int) -> int:
        """How many are ahead of the ticket: 0 when it is its turn."""
        with self._changed:
            return self._line.index(ticket)

    def wait(self, ticket: int, seconds: float) -> int:
        """Wait up to seconds for the ticket's turn; the place it then has (0: its turn)."""
        with self._changed:
            self._changed.wait_for(lambda: self._line.index(ticket) == 0, seconds)
            return self._line.index(ticket)

    def leave(self, ticket: int) -> None:
        """The ticket's run ended, or its visitor stopped waiting; the next one goes."""
        with self._changed:
            if ticket in self._line:
                self._line.remove(ticket)
            self._changed.notify_all()

    def waiting(self) -> int:
        """Tickets in line behind the running one."""
        with self._changed:
            return max(0, len(self._line) - 1)


def ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, …, 11th, 12th, 21st."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def waiting_line(place: int) -> str:
    """What a waiting visitor reads: their place in line."""
    return (
        f"Waiting for a turn: {ordinal(place)} in line. This server runs one experiment at a "
        "time; yours starts when the ones ahead have finished."
    )


class RunCancelledError(Exception):
    """The visitor left (closed the tab, or changed the page) while their experiment ran."""


class BackgroundRun(Generic[T]):
    """An experiment computed in a thread of its own at a lower priority (Linux: a thread has
    its own nice value), so that a visitor's keystroke is served first; the page polls its
    progress. It leaves the queue when it ends, however it ends: the next run never overlaps."""

    def __init__(self, work: Callable[[Progress], T], queue: ExperimentQueue, ticket: int) -> None:
        self.progress: tuple[int, int, str] = (0, 1, "starting")
        self.result: T | None = None
        self.error: BaseException | None = None
        self._cancelled = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(work, queue, ticket), name="attnlens-experiment", daemon=True
        )
        self._thread.start()

    def _run(self, work: Callable[[Progress], T], queue: ExperimentQueue, ticket: int) -> None:
        try:
            lower_priority()
            self.result = work(self._report)
        except BaseException as err:  # handed to the page, which shows or raises it
            self.error = err
        finally:
            queue.leave(ticket)

    def _report(self, done: int, total: int, what: str) -> None:
        if self._cancelled.is_set():
            raise RunCancelledError(what)
        self.progress = (done, total, what)

    def wait(self, seconds: float) -> bool:
        """Wait up to seconds; whether the run has ended."""
        self._thread.join(seconds)
        return not self._thread.is_alive()

    def cancel(self) -> None:
        """Stop at the run's next progress report (its turn ends then)."""
        self._cancelled.set()


def lower_priority() -> None:
    """Give the calling thread a nice value of NICE (Linux only: elsewhere the call would
    lower the whole server's priority)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
