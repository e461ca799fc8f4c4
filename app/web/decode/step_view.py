"""Decode's step-through, drawn in the browser (static/step_view.js) from viz.steps_data's payload
of every step: ◀ / ▶ and the "Step" slider move it at once, with no rerun to wait for, and then tell
the server the step (on_step), whose fragment draws what follows from it (the candidates table, the
beam tree, the URL). The Plotly figures of the same step stay what the download buttons export."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attnlens.app.web.components import component, text_sizes

KEY = "step_view"
HTML = """<div class="ds-root" aria-label="decode step">
<div class="ds-controls">
<button type="button" class="ds-prev">◀ previous</button>
<button type="button" class="ds-next">next ▶</button>
<label class="ds-slide"><span class="ds-label">Step</span><span class="ds-at"></span>
<input type="range" class="ds-slider" min="0" max="0" step="1" value="0" aria-label="Step">
</label></div>
<div class="ds-tokens"></div><div class="ds-note" hidden></div>
<div class="ds-views">
<div class="ds-cands"><div class="ds-title"></div><div class="ds-bars"></div></div>
<div class="ds-att"><div class="ds-title"></div><div class="ds-panels"></div></div>
</div>
<div class="ds-tip" hidden></div>
</div>"""

_mount = component("attnlens_steps", "step_view", HTML)


def step_view(
    data: dict[str, Any],
    step: int,
    moved: str,
    whose: str,
    present: bool,
    on_step: Callable[[], None],
) -> None:
    """The steps of viz.steps_data payload `data`, opened on `step`. The page keeps the step
    it shows while `moved` stays the same (a rerun for an older step does not pull it back);
    a new `moved` (new run, a click in the tree) makes it show `step`. on_step runs when the
    user moved it (stepped() then says where)."""
    sizes = text_sizes(present)
    _mount(
        key=KEY,
        data={**data, **sizes, "step": step, "moved": moved, "whose": whose, "stacked": present},
        on_step_change=on_step,
    )


def stepped(n: int) -> int | None:
    """The step the page just moved to, read inside on_step; None without one."""
    state = st.session_state.get(KEY)
    return step_of(state.get("step") if isinstance(state, dict) else None, n)


def step_of(value: object, n: int) -> int | None:
    """The step of a page's report {"step": k, "sent": ms} (each report a new value, so that
    Streamlit passes on a step equal to the last one sent); None for anything that is not a
    step of a run of n steps (the browser's word is checked, not trusted)."""
    step = value.get("step") if isinstance(value, dict) else None
    if type(step) is not int or not 0 <= step < n:  # bool is an int, and not a step
        return None
    return step
