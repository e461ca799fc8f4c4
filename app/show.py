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
        st.download_button(
            "Figure (HTML)",
            data=_html(fig),
            file_name=f"{file_name}.html",
            mime="text/html",
            key=f"{key}_download",
            on_click="ignore",
        )
        if can_export_images():
            for fmt, mime in (("png", "image/png"), ("svg", "image/svg+xml")):
                st.download_button(
                    f"{fmt.upper()}",
                    data=_image(fig, fmt),
                    file_name=f"{file_name}.{fmt}",
                    mime=mime,
                    key=f"{key}_{fmt}",
                    on_click="ignore",
                    help="drawn by kaleido with the system's Chromium: a few seconds",
                )


@functools.cache
def can_export_images() -> bool:
    """PNG and SVG need kaleido and a Chromium for it to drive."""
    has_browser = any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome"))
    return has_browser and importlib.util.find_spec("kaleido") is not None


def _image(fig: go.Figure, fmt: str) -> Callable[[], bytes]:
    """Built only when clicked (kaleido starts a browser: seconds, not milliseconds)."""
    return lambda: bytes(fig.to_image(format=fmt, scale=2 if fmt == "png" else 1))


def _html(fig: go.Figure) -> Callable[[], str]:
    """Built only when clicked: the figure with plotly.js inside, so it opens offline."""
    return lambda: str(fig.to_html(include_plotlyjs=True, full_html=True))


def table(frame: pd.DataFrame, key: str, file_name: str) -> None:
    """A dataframe (token text stays text; numbers shown to 4 decimals) and a CSV download of
    it at full precision."""
    st.dataframe(frame.round(4), hide_index=True, width="stretch", key=key)
    st.download_button(
        "Download table (CSV)",
        data=frame.to_csv(index=False),
        file_name=f"{file_name}.csv",
        mime="text/csv",
        key=f"{key}_download",
        on_click="ignore",
    )


def record(json_text: Callable[[], str], key: str, file_name: str, label: str) -> None:
    """A download of a record as JSON, serialised only when clicked."""
    st.download_button(
        label,
        data=json_text,
        file_name=f"{file_name}.json",
        mime="application/json",
        key=key,
        on_click="ignore",
    )
