"""Timing work done by several threads at once, as Streamlit's session threads do it."""

from __future__ import annotations

import threading
import time


def seconds_all_done(threads: list[threading.Thread]) -> float:
    """Start every thread at once; the seconds until the last one has finished."""
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start
