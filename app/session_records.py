"""What one browser session computed (its traces and decoding runs), held only while that
session is connected.

The records live in a session-scoped resource, which Streamlit clears the moment the browser
disconnects (a closed tab), rather than in st.session_state, which Streamlit keeps for a
possible reconnection until a later disconnect expires it. When a session's records go, the
freed memory is handed back to the operating system (glibc keeps freed blocks otherwise).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Hashable
from typing import Any

import streamlit as st

Held = dict[str, tuple[Hashable, Any]]  # slot -> (what it was computed from, the result)


def _released(records: Held) -> None:
    records.clear()
    give_back_memory()


@st.cache_resource(scope="session", show_spinner=False, on_release=_released)
def held() -> Held:
    """This session's records by slot; emptied when the session disconnects."""
    return {}


def give_back_memory() -> None:
    """Return freed heap memory to the operating system (glibc's malloc_trim; elsewhere a
    no-op)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
