"""Explore's head at any length, drawn on a canvas in the browser (static/head_zoom.js) from
viz.HeadWindow's payload (app/web/components.py): a box dragged on it, or "Whole head", sends
the window wanted back, and the server answers with that window of the one head shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attnlens.app.web.components import component, text_sizes
from attnlens.viz.heads.head_window import Span

KEY = "head_zoom"
EVENT = "zoom"  # the trigger a box or a reset sets: {"rows": [r0, r1], "cols": [c0, c1]}
HTML = """<div class="hz-root">
<div class="hz-title"></div><div class="hz-caption"></div>
<div class="hz-bar-row"><button class="hz-reset" type="button">Whole head</button>
<div class="hz-legend"><div class="hz-bar-title"></div><div class="hz-bar"></div>
<div class="hz-ticks"></div></div></div>
<div class="hz-stage"><canvas class="hz-canvas" aria-label="one head's weights"></canvas>
<div class="hz-labels"></div><div class="hz-box" hidden></div>
<div class="hz-tip" hidden></div></div>
</div>"""
RESET = "reset"

_mount = component("attnlens_head_zoom", "head_zoom", HTML)


def head_zoom(data: dict[str, Any], present: bool, on_zoom: Callable[[], None]) -> None:
    """The head of viz.HeadWindow.data() payload `data`; on_zoom runs when a box is dragged or
    the whole head asked for (zoom_asked() then says which)."""
    _mount(key=KEY, data={**data, **text_sizes(present)}, on_zoom_change=on_zoom)


def zoom_asked(size: tuple[int, int]) -> tuple[Span, Span] | str | None:
    """The window just asked for, read inside on_zoom: (rows, cols), RESET, or None."""
    state = st.session_state.get(KEY)
    return window_of(state.get(EVENT) if isinstance(state, dict) else None, size)


def window_of(value: object, size: tuple[int, int]) -> tuple[Span, Span] | str | None:
    """(rows, cols) of a zoom's value within a (Q, K) head, RESET for {"reset": true}; None for
    anything else (the browser's word is checked, not trusted)."""
    if not isinstance(value, dict):
        return None
    if value.get("reset") is True:
        return RESET
    spans = []
    for name, n in zip(("rows", "cols"), size, strict=True):
        span = value.get(name)
        if not (isinstance(span, list) and len(span) == 2):
            return None
        start, stop = span
        if type(start) is not int or type(stop) is not int or not 0 <= start < stop <= n:
            return None
        spans.append((start, stop))
    return spans[0], spans[1]
