"""Whether this session's screen is a phone's: a tiny component (static/screen_size.js) says so
once, and every figure is then laid out for it (viz/shared/narrow.py; show.styled). A laptop's
tab never reruns for it; a phone's tab draws its first page wide, then once more narrow."""

from __future__ import annotations

import streamlit as st

from attnlens.app.web.components import component
from attnlens.viz.shared.narrow import NARROW_PX

KEY = "screen_size"
HTML = '<div class="ss-root"></div>'

_mount = component("attnlens_screen_size", "screen_size", HTML)


def screen_size() -> None:
    """Mount the component (once a run, anywhere on the page: it draws nothing)."""
    _mount(key=KEY, data={"below": NARROW_PX, "known": size()}, on_size_change=_said)


def size() -> str:
    """ "narrow" on a phone's screen, else "wide" (until the browser has said otherwise)."""
    state = st.session_state.get(KEY)
    said = state.get("size") if isinstance(state, dict) else None
    return "narrow" if said == "narrow" else "wide"


def narrow() -> bool:
    """Whether figures are to be laid out for a phone."""
    return size() == "narrow"


def _said() -> None:
    """The browser said its size: the rerun it starts lays the figures out for it."""
