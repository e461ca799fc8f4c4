"""Explore's lines view, drawn on a canvas in the browser (static/lines_canvas.js) from
viz.lines_data's compact payload (app/web/components.py); the Plotly figure of the same lines stays
what its download buttons export."""

from __future__ import annotations

from typing import Any

from attnlens.app.web.components import component, text_sizes

KEY = "lines_canvas"
HTML = """<div class="lv-root"><div class="lv-title"></div>
<div class="lv-stage"><canvas class="lv-canvas" aria-label="lines view"></canvas>
<div class="lv-labels"></div><div class="lv-tip" hidden></div></div>
</div>"""

_mount = component("attnlens_lines", "lines_canvas", HTML)


def lines_canvas(data: dict[str, Any], present: bool) -> None:
    """The lines of viz.LinesData.data() payload `data`, at the session's text size."""
    _mount(key=KEY, data={**data, **text_sizes(present)})
