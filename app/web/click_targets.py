"""Figures made clickable in Streamlit: its chart selection reports clicked points only when
their customdata are plain lists, so a figure's typed-array customdata (which gives Streamlit
no selection at all) become plain lists. (Explore's every-head grid is not a chart: it reports
its clicks itself, app/web/explore/grid_canvas.py.)"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def clickable(fig: go.Figure) -> go.Figure:
    """The figure with every trace's customdata as plain lists (a chart whose points carry
    typed-array customdata gives Streamlit no click selection at all)."""
    traces = [trace.to_plotly_json() for trace in fig.data]
    for spec in traces:
        if spec.get("customdata") is not None:
            spec["customdata"] = np.asarray(spec["customdata"]).tolist()
    return go.Figure(data=traces, layout=fig.layout)  # built from lists, so kept as lists
