"""How a student's screen learns that the teacher moved, at no cost while the class stays put.

A Streamlit rerun costs 30–60 ms of server CPU even when nothing changed, so polling by rerun
limits a class to a few dozen students on two cores, and even a browser fetching a small file
a few times a second cost the server ~5 ms per student per second. Instead one thread per
process (the board) reads the version of each class followed here from the store every
TICK_SECONDS, and the student's browser holds one request to the follow route
(follow_route.py) that the server answers only when the version changes (or after
HOLD_SECONDS, unchanged, so that no proxy cuts it): the board's thread wakes every request
waiting on the class at once. The browser then fetches the slide (slide_route.py, built once
for the class) and draws it itself (follow_page.py): no Streamlit rerun per student. With Redis,
every replica's board reads the same store, so a student follows a teacher on another replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly

from attnlens.app.classroom.follow_page import FOLLOW_HTML, FOLLOW_PATH, PLOTLY_FILE, RETRY_MS
from attnlens.app.classroom.limits import MAX_STUDENTS, ClassError
from attnlens.app.classroom.names import normal_code
from attnlens.app.classroom.store import ACTIVE_SECONDS, ClassStore
from attnlens.app.classroom.stores import open_store

TICK_SECONDS = 0.1  # how often the board reads the versions of the classes followed here
FORGET_SECONDS = 120.0  # a class nobody here asked about for this long is no longer read
HOLD_SECONDS = 20.0  # a follow request unanswered this long is answered "unchanged"
SEEN_SECONDS = 10.0  # a student's follow request tells the store they are there this often
MAX_WAITERS = 2 * MAX_STUDENTS  # follow requests one process holds at once, all classes
# Plotly.js as the plotly package ships it: the same version that wrote the figures' JSON
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / PLOTLY_FILE
__all__ = ["FOLLOW_HTML", "FOLLOW_PATH", "RETRY_MS", "VersionBoard", "shared_board"]

assert HOLD_SECONDS + 2 < ACTIVE_SECONDS, "a student waiting counts as there (store.py)"
Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[int]"]


class TooManyWaitingError(Exception):
    """More students' pages wait on this process than it holds (MAX_WAITERS)."""


class VersionBoard:
    """The versions of the classes followed in this process, and the requests waiting on them.

    One thread reads each followed class's version from the store every TICK_SECONDS; a
    version that changed wakes every request waiting on that class (`wait`, from the server's
    event loop), so a student's page learns the teacher moved within a tick, and costs nothing
    while the class stays on one slide."""

    def __init__(
        self,
        store: ClassStore,
        folder: Path | None = None,
        forget_seconds: float = FORGET_SECONDS,
        max_waiters: int = MAX_WAITERS,
    ) -> None:
        self.store = store
        self.forget_seconds = forget_seconds
        self.max_waiters = max_waiters
        self.folder = folder or Path(tempfile.mkdtemp(prefix="attnlens-follow-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "index.html").write_text(FOLLOW_HTML, encoding="utf-8")
        shutil.copyfile(PLOTLY_JS, self.folder / PLOTLY_FILE)
        self._asked: dict[str, float] = {}  # code -> when a page last asked to follow it
        self._versions: dict[str, int] = {}  # code -> its version as last read (-1: no class)
        self._waiting: dict[str, set[Waiter]] = {}  # code -> the requests waiting on it
        self._count = 0  # requests waiting, all classes
        self._seen: dict[tuple[str, str], float] = {}  # (code, student) -> told the store
        self._lock = threading.Lock()
        self._reading = threading.Lock()  # a page's first watch and the thread read one class
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="attnlens-class-board", daemon=True)
        self._thread.start()

    def watch(self, code: str) -> None:
        """Keep the class's version read here (a page follows it); read at once the first time."""
        code = normal_code(code)
        if not code:
            return
        with self._lock:
            new = code not in self._asked
            self._asked[code] = time.monotonic()
        if new:
            self._refresh(code)

    def read(self, code: str) -> int | None:
        """The class's version (-1: no such class), read from the store now unless read here
        already, and kept read (a page follows it); None if the store did not answer."""
        self.watch(code)
        known = self.version(code)
        return known if known is not None else self._refresh(code)

    def version(self, code: str) -> int | None:
        """The class's version as last read here (-1: no such class), None if not read here."""
        with self._lock:
            return self._versions.get(code)

    @property
    def waiting(self) -> int:
        """Requests waiting on a class now, all classes."""
        with self._lock:
            return self._count

    async def wait(self, code: str, after: int, timeout: float) -> int | None:
        """The class's version as soon as it is not `after`: at once if it already is not, else
        when the board reads a new one; None if it stayed `after` for `timeout` seconds. -1:
        the store has no such class (a code nobody created is not kept read: a script asking
        about made-up codes costs one read each, nothing after). TooManyWaitingError past
        max_waiters requests waiting at once."""
        with self._lock:
            self._asked[code] = time.monotonic()
            known = self._versions.get(code)
        if known is None:  # never read here (this process started after the class did)
            known = await asyncio.to_thread(self._refresh, code)
            if known == -1:
                self._drop(code)
                return -1
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        waiter = (loop, future)
        with self._lock:  # read and enlisted under the thread's lock: no change falls between
            now = self._versions.get(code, after)
            if now != after:
                return now
            if self._count >= self.max_waiters:
                raise TooManyWaitingError(f"{self._count} requests wait here already")
            self._waiting.setdefault(code, set()).add(waiter)
            self._count += 1
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None
        finally:
            with self._lock:
                waiters = self._waiting.get(code, set())
                if waiter in waiters:
                    waiters.discard(waiter)
                    self._count -= 1
                if not waiters:
                    self._waiting.pop(code, None)

    def due(self, code: str, student: str) -> bool:
        """Whether the store should hear now that this student's page is open (SEEN_SECONDS
        since it last did), noted as told; kept for MAX_WAITERS students at most."""
        now = time.monotonic()
        with self._lock:
            if now - self._seen.get((code, student), -SEEN_SECONDS) < SEEN_SECONDS:
                return False
            if len(self._seen) >= self.max_waiters:
                old = [k for k, t in self._seen.items() if now - t >= SEEN_SECONDS]
                for k in old or list(self._seen)[: len(self._seen) // 2]:
                    del self._seen[k]
            self._seen[(code, student)] = now
            return True

    def seen(self, code: str, student: str) -> None:
        """Tell the store this student's page is open (the teacher's count). A store that does
        not answer for a moment is no reason to fail a follow request: the next one tells it."""
        with contextlib.suppress(ClassError):
            self.store.seen(code, student)

    def left(self, code: str, student: str) -> None:
        """This student's page closed: the store no longer counts them here, and the next
        request of theirs (a reload, the tab back) tells it they are, at once."""
        with self._lock:
            self._seen.pop((code, student), None)
        with contextlib.suppress(ClassError):
            self.store.left(code, student)

    def _drop(self, code: str) -> None:
        """Stop reading a class no page follows (unless a request waits on it)."""
        with self._lock:
            if code not in self._waiting:
                self._asked.pop(code, None)
                self._versions.pop(code, None)

    def _run(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            now = time.monotonic()
            with self._lock:
                gone = [c for c, t in self._asked.items()
                        if now - t > self.forget_seconds and c not in self._waiting]  # fmt: skip
                for code in gone:
                    del self._asked[code]
                    self._versions.pop(code, None)
                codes = list(self._asked)
            for code in codes:
                try:
                    self._refresh(code)
                except Exception as err:  # the thread outlives any one failure: were it to
                    # end, every class followed in this process would stop following
                    print(f"attnlens: class {code}: version not read ({err!r})", file=sys.stderr)

    def _refresh(self, code: str) -> int | None:
        """Read the class's version; if it changed, wake every request waiting on the class.
        One reader at a time, so a newer version is never overwritten by an older one. None:
        the store did not answer (the pages keep their slide; the next tick reads again)."""
        with self._reading:
            try:
                state = self.store.state(code)
            except ClassError:
                return None
            version = -1 if state is None else state.version
            with self._lock:
                if self._versions.get(code) == version:
                    return version
                self._versions[code] = version
                woken = list(self._waiting.get(code, ()))
        loops: dict[asyncio.AbstractEventLoop, list[asyncio.Future[int]]] = {}
        for loop, future in woken:
            loops.setdefault(loop, []).append(future)
        for loop, futures in loops.items():  # one call per loop wakes all its requests at once
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(_settle, futures, version)
        return version

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _settle(futures: list[asyncio.Future[int]], version: int) -> None:
    for future in futures:
        if not future.done():  # not timed out meanwhile
            future.set_result(version)


_BOARDS: dict[str, VersionBoard] = {}
_BOARDS_LOCK = threading.Lock()


def shared_board(url: str) -> VersionBoard:
    """The board of this process for the class store at `url`: one thread, shared by the
    pages (which name the classes they follow) and the follow route (which waits on them)."""
    with _BOARDS_LOCK:
        board = _BOARDS.get(url)
        if board is None:
            board = _BOARDS[url] = VersionBoard(open_store(url))
        return board


def follow_signal(declare: Callable[..., Any], folder: Path) -> Callable[..., Any]:
    """The component a following student's page draws the class's slide in (declared once)."""
    return declare("attnlens_follow", path=str(folder))  # type: ignore[no-any-return]
