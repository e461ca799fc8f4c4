"""Showing figures and tables the same way on every page, each with its download button."""

from __future__ import annotations

import functools
import importlib.util
import shutil
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from attnlens.app import downloads
from attnlens.record.decode import DecodeRun
from attnlens.record.export import json_bound, json_chunks
from attnlens.record.trace import Trace

LARGE_FONT = 22
FIRST_CHART_PAUSE = 0.04  # seconds between the chart an action waits for and the ones after it


def let_it_draw() -> None:
    """A moment's pause after the chart the user's action waits for (Explore's heatmap, the
    Decode step's candidates): Streamlit sends each chart as soon as the script makes it, but a
    browser that receives several at once draws them in one go, so the first would wait for
    the rest. The server's CPU is free meanwhile."""
    time.sleep(FIRST_CHART_PAUSE)


def styled(fig: go.Figure) -> go.Figure:
    """The figure, changed in place, in the session's presentation size and theme (no copy:
    copying re-validates every trace, and each figure is drawn fresh for one run)."""
    if st.session_state.get("_present"):
        fig.update_layout(font={"size": LARGE_FONT}, title_font={"size": LARGE_FONT + 6})
    if _dark():
        fig.update_layout(plot_bgcolor="rgba(0,0,0,0)", paper_bgcolor="rgba(0,0,0,0)")
    return fig


def clicked_point(key: str) -> dict[str, Any] | None:
    """The first point of a chart's selection (inside its on_click callback), if any."""
    event = st.session_state.get(key)
    points = event.selection.points if event is not None else []
    return dict(points[0]) if points else None


def _dark() -> bool:
    try:
        return st.context.theme.type == "dark"
    except (AttributeError, KeyError, RuntimeError):
        return False


def figure(
    fig: go.Figure, key: str, file_name: str, on_click: Callable[[], None] | None = None
) -> None:
    """A Plotly chart and a button that downloads it, as shown, as a standalone HTML file;
    `on_click` runs when a point is clicked (its selection is in st.session_state[key])."""
    shown = styled(fig)
    if on_click is None:
        st.plotly_chart(shown, key=key, width="stretch")
    else:
        st.plotly_chart(
            shown, key=key, width="stretch", on_select=on_click, selection_mode="points"
        )
    with st.container(horizontal=True):
        bound = downloads.figure_bound(fig)
        downloads.button(
            "Figure (HTML)", downloads.html_writer(fig), bound + downloads.PLOTLY_JS_BYTES,
            f"{file_name}.html", "text/html", f"{key}_download",
        )  # fmt: skip
        if can_export_images():
            for fmt, mime in (("png", "image/png"), ("svg", "image/svg+xml")):
                downloads.button(
                    fmt.upper(), downloads.image_writer(fig, fmt), downloads.IMAGE_BYTES,
                    f"{file_name}.{fmt}", mime, f"{key}_{fmt}",
                    help="drawn by kaleido with the system's Chromium: a few seconds",
                )  # fmt: skip


@functools.cache
def can_export_images() -> bool:
    """PNG and SVG need kaleido and a Chromium for it to drive."""
    has_browser = any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome"))
    return has_browser and importlib.util.find_spec("kaleido") is not None


def table(frame: pd.DataFrame, key: str, file_name: str) -> None:
    """A dataframe (token text stays text; numbers shown to 4 decimals) and a CSV download of
    it at full precision, written when clicked."""
    st.dataframe(frame.round(4), hide_index=True, width="stretch", key=key)
    bound = int(frame.memory_usage(deep=True).sum()) * 2 + 4096  # text is at most twice that
    downloads.button(
        "Download table (CSV)",
        downloads.text_writer(lambda: [frame.to_csv(index=False)]),
        bound, f"{file_name}.csv", "text/csv", f"{key}_download",
    )  # fmt: skip


def record(rec: Trace | DecodeRun, key: str, file_name: str, label: str) -> None:
    """A download of a record as JSON, written piece by piece when clicked; refused, with
    its size, above the budget."""
    bound = json_bound(rec.json_tree())
    downloads.button(
        label, downloads.text_writer(lambda: json_chunks(rec.json_tree())), bound,
        f"{file_name}.json", "application/json", key,
    )  # fmt: skip
