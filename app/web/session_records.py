"""What one browser session computed (its traces and decoding runs), held only while that
session is connected.

The records live in a session-scoped resource, which Streamlit clears the moment the browser
disconnects (a closed tab), rather than in st.session_state, which Streamlit keeps for a
possible reconnection until a later disconnect expires it. Files the session downloaded are
dropped too: Streamlit keeps each served download until two later script runs have passed
(it marks, then deletes), and with every tab closed there are none. Then the freed memory is
handed back to the operating system (glibc keeps freed blocks otherwise). A little later one
full garbage collection frees what the closed sessions left in reference cycles (figures,
sockets): `attnlens serve` runs none after reruns, and Python's own waits until the objects
that outlived younger collections number a quarter of those already old (torch's, the models').
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attnlens.app.server.memory import give_back_memory

DOWNLOAD_GRACE_S = 5.0  # a download being fetched right now is fetched well within this
COLLECT_AFTER_S = DOWNLOAD_GRACE_S + 1.0  # once the first closed tab's downloads are deleted


@dataclass
class SessionRecords:
    """One session's records by slot, and its fragments: a fragment keeps the arguments it
    was drawn with (a Trace, a DecodeRun) so it can run again alone."""

    records: dict[str, tuple[Hashable, Any]] = field(default_factory=dict)
    fragments: Any = None  # Streamlit's fragment storage of the session
    session_id: str | None = None
    collector: Collector | None = None  # the server's, shared by every session


class Collector:
    """Runs `collect` once, `delay` seconds after a session closed; sessions that close while
    it waits join it, so a class leaving at once costs one pass (a full collection walks the
    ~460k objects of torch and a model: 0.2 s on a loaded CPU)."""

    def __init__(self, collect: Callable[[], None], delay: float = COLLECT_AFTER_S) -> None:
        self.collect, self.delay = collect, delay
        self._lock = threading.Lock()
        self._waiting = False

    def soon(self) -> None:
        """A pass `delay` seconds from now, unless one is waiting already."""
        with self._lock:
            if self._waiting:
                return
            self._waiting = True
        timer = threading.Timer(self.delay, self._run)
        timer.daemon = True
        timer.start()

    def _run(self) -> None:
        with self._lock:
            self._waiting = False  # a session closing from now on needs a pass of its own
        self.collect()


def collect_garbage() -> None:
    """A full garbage collection, then the freed memory given back."""
    gc.collect()
    give_back_memory()


def _released(held: SessionRecords) -> None:
    held.records.clear()
    if held.fragments is not None:
        held.fragments.clear()  # a reconnected session runs again from the top
    _drop_downloads(held.session_id)
    give_back_memory()
    if held.collector is not None:
        held.collector.soon()


@st.cache_resource(show_spinner=False)
def _collector() -> Collector:
    return Collector(collect_garbage)


@st.cache_resource(scope="session", show_spinner=False, on_release=_released)
def _held() -> SessionRecords:
    ctx = get_script_run_ctx()
    if ctx is None:
        return SessionRecords()
    return SessionRecords(
        fragments=ctx.fragment_storage, session_id=ctx.session_id, collector=_collector()
    )


def held() -> dict[str, tuple[Hashable, Any]]:
    """This session's records by slot (what they were computed from, the result); emptied
    when the session disconnects."""
    return _held().records


def _drop_downloads(session_id: str | None) -> None:
    """Forget the session's download buttons (each holds a callable that holds a record) and
    the files it downloaded: those no session refers to are marked now and deleted a little
    later (the two passes Streamlit itself makes at the end of script runs)."""
    from streamlit import runtime

    if session_id is None or not runtime.exists():
        return
    files = runtime.get_instance().media_file_mgr
    files.clear_session_refs(session_id)  # a reconnected session runs again and re-adds them
    files.remove_orphaned_files()

    def delete() -> None:
        files.remove_orphaned_files()
        give_back_memory()

    timer = threading.Timer(DOWNLOAD_GRACE_S, delete)
    timer.daemon = True
    timer.start()
