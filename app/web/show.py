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

from attnlens.app.web import downloads, screen_size
from attnlens.app.web.pickers import memo
from attnlens.record.decode import DecodeRun
from attnlens.record.export import json_bound, json_chunks
from attnlens.record.trace import Trace
from attnlens.viz.shared.html_file import standalone_html
from attnlens.viz.shared.labels import visible
from attnlens.viz.shared.narrow import narrowed
from attnlens.viz.shared.style import EXPORT_WIDTH, PROJECTOR_FONT, exported, image_size, projector
from attnlens.viz.shared.vector_cells import VECTOR_CELLS, heatmap_cells, vector_cells

CLEAR = "rgba(0,0,0,0)"
FIRST_CHART_PAUSE = 0.04  # seconds between the chart an action waits for and the ones after it
MISSING = "–"  # a value a table has no meaning for


PROJECTED_ROWS = 30  # a table up to this long is drawn as large text on a projector
TALLEST_PX = 1300  # the tallest figure a page draws (a beam tree of 16 rows at 24 px)
# Plotly's own camera button drew the chart at its size on screen (556 px: x labels on top of
# one another) and named the file from its title, without the head: the buttons below give
# the file, named and laid out as every other download
CHART_CONFIG: dict[str, object] = {"modeBarButtonsToRemove": ["toImage"]}
# on a projector no toolbar floats over a figure the room reads (a drag still zooms, a double
# click still goes back)
PROJECTOR_CHART_CONFIG: dict[str, object] = {**CHART_CONFIG, "displayModeBar": False}


def chart_config() -> dict[str, object]:
    """Plotly's settings for this session's charts: no toolbar in presentation mode."""
    return PROJECTOR_CHART_CONFIG if presenting() else CHART_CONFIG


def presenting() -> bool:
    """Whether this session shows the app for a projector (the sidebar's toggle)."""
    return bool(st.session_state.get("_present"))


def let_it_draw() -> None:
    """A moment's pause after the chart the user's action waits for (Explore's heatmap):
    Streamlit sends each chart as soon as the script makes it, but a browser that receives
    several at once draws them in one go, so the first would wait for the rest. The server's
    CPU is free meanwhile."""
    time.sleep(FIRST_CHART_PAUSE)


def styled(fig: go.Figure, present: bool | None = None) -> go.Figure:
    """The figure, changed in place, as this session shows it (no copy: copying re-validates
    every trace, and each figure is drawn fresh for one run).

    Backgrounds are left clear, so the page's theme shows through and Streamlit colours the
    text for it in the browser: a theme switched in the ⋮ menu (no rerun) still reads. In
    presentation mode (`present`, or this session's when None) every text is projector-sized."""
    fig.layout.plot_bgcolor = fig.layout.paper_bgcolor = CLEAR  # a third of update_layout's time
    if presenting() if present is None else present:
        projector(fig, PROJECTOR_FONT)
    elif screen_size.narrow():  # a phone: panels stacked, labels cut, colour bars below
        narrowed(fig)
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
    """A Plotly chart and buttons that download it as shown (HTML; PNG and SVG when kaleido
    can draw them); `on_click` runs when a point is clicked (its selection is in
    st.session_state[key])."""
    shown = styled(fig)
    config = chart_config()
    if screen_size.narrow():
        config = {**config, "displayModeBar": False}  # a toolbar over a phone's small plot
    if on_click is None:
        st.plotly_chart(shown, key=key, width="stretch", config=config)
    else:
        st.plotly_chart(
            shown, key=key, width="stretch", on_select=on_click, selection_mode="points",
            config=config,
        )  # fmt: skip
    download_buttons(shown, key, file_name)


def download_buttons(fig: go.Figure, key: str, file_name: str) -> None:
    """Download buttons for a figure as this session shows it, in the page's theme."""
    figure_downloads(
        lambda: fig, downloads.figure_bound(fig), key, file_name, image_size(fig),
        heatmap_cells(fig),
    )  # fmt: skip


def figure_downloads(
    make: Callable[[], go.Figure],
    bound: int,
    key: str,
    file_name: str,
    size: dict[str, int] | None = None,
    cells: int = 0,
) -> None:
    """Download buttons for the figure `make` builds as shown, only when one is clicked (for a
    view the page draws without Plotly, such as Explore's lines), in the page's theme; `bound`
    is at most how many bytes its JSON takes, `size` its image's width and height (at most
    EXPORT_WIDTH × TALLEST_PX when not known before it is built), `cells` how many heatmap
    cells it holds (an SVG draws at most VECTOR_CELLS as vectors: past that, take the PNG)."""
    dark = _dark()
    width, height = (size or {}).get("width", EXPORT_WIDTH), (size or {}).get("height", TALLEST_PX)
    with st.container(horizontal=True):
        downloads.button(
            "Figure (HTML)", _writer(make, "html", dark), bound + downloads.PLOTLY_JS_BYTES,
            f"{file_name}.html", "text/html", f"{key}_download",
        )  # fmt: skip
        if can_export_images():
            for fmt, mime in (("png", "image/png"), ("svg", "image/svg+xml")):
                downloads.button(
                    fmt.upper(), _writer(make, fmt, dark),
                    downloads.image_bound(bound, fmt, width, height),
                    f"{file_name}.{fmt}", mime, f"{key}_{fmt}",
                    help="drawn by kaleido with the system's Chromium: a few seconds",
                    refused=svg_refusal(cells) if fmt == "svg" else None,
                )  # fmt: skip


def svg_refusal(cells: int) -> str | None:
    """Why a figure of `cells` heatmap cells gets no SVG (None: it does, its cells vectors)."""
    if cells <= VECTOR_CELLS:
        return None
    return (
        f"a heatmap of {cells:,} cells: an SVG draws at most {VECTOR_CELLS:,} as vectors "
        "(128 × 128); the PNG holds them all"
    )


def export(fig: go.Figure, fmt: str, dark: bool = False) -> bytes:
    """The file a download button gives: the figure as shown (presentation sizes included),
    in the light or dark theme's own template, whose margins grow to fit every label (the
    process-wide default is Streamlit's, with fixed margins and placeholder colours). HTML,
    PNG and SVG share one layout: the same width and height (image_size), so the same
    margins; HTML opens offline (plotly.js inside, gzipped); an SVG draws heatmap cells as
    vectors (viz/shared/vector_cells.py); PNG is drawn at twice the size."""
    out = exported(fig, dark)
    out.update_layout(**image_size(out))
    if fmt == "html":
        return standalone_html(out).encode()
    if fmt == "svg" and heatmap_cells(out) <= VECTOR_CELLS:
        out = vector_cells(out)  # the cells as vectors, not a picture inside the SVG
    scale = downloads.PNG_SCALE if fmt == "png" else 1
    return bytes(out.to_image(format=fmt, scale=scale))


def _writer(make: Callable[[], go.Figure], fmt: str, dark: bool) -> downloads.Writer:
    """The file, made only when clicked (kaleido starts a browser: seconds, not ms)."""

    def write(handle: Any) -> None:
        handle.write(export(make(), fmt, dark))

    return write


@functools.cache
def can_export_images() -> bool:
    """PNG and SVG need kaleido and a Chromium for it to drive."""
    has_browser = any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome"))
    return has_browser and importlib.util.find_spec("kaleido") is not None


def table(frame: pd.DataFrame, key: str, file_name: str, wide: tuple[str, ...] = ()) -> None:
    """A dataframe as people read it (numbers to 4 decimals, a missing value as '–', never
    'None'; tokens made visible, a space as '␣'; `wide` columns given room to show their text
    whole) and a CSV download of the data itself at full precision."""
    if presenting() and len(frame) <= PROJECTED_ROWS:  # a grid's canvas keeps 14 px text
        st.table(readable(frame).hide(axis="index"))  # HTML: projector-sized by the page's CSS
    else:
        config = {name: st.column_config.TextColumn(name, width="large") for name in wide}
        st.dataframe(
            readable(frame), hide_index=True, width="stretch", key=key, column_config=config,
            placeholder=MISSING,  # the browser draws a missing value as this, not "None"
        )  # fmt: skip
    bound = int(frame.memory_usage(deep=True).sum()) * 2 + 4096  # text is at most twice that
    downloads.button(
        "Download table (CSV)",
        downloads.text_writer(lambda: [frame.to_csv(index=False)]),
        bound, f"{file_name}.csv", "text/csv", f"{key}_download",
    )  # fmt: skip


def record(
    rec: Trace | DecodeRun, key: str, file_name: str, label: str, instead: str | None = None
) -> None:
    """A download of a record as JSON, written piece by piece when clicked; refused, with
    its size and what to use `instead`, when sending it would pass the budget."""
    bound = memo(f"{key}_bound", rec, lambda: json_bound(rec.json_tree()))  # once per record
    downloads.button(
        label, downloads.text_writer(lambda: json_chunks(rec.json_tree())), bound,
        f"{file_name}.json", "application/json", key, instead=instead,
    )  # fmt: skip


def readable(frame: pd.DataFrame) -> Any:
    """The frame for the eye: a Styler showing numbers to 4 decimals and missing values as
    '–' (the data keeps NaN, so columns still sort as numbers), and text cells made visible."""
    shown = frame.copy()
    for name in shown.columns:  # pandas 3 keeps text as its own `str` dtype, not `object`
        if shown[name].dtype == object or pd.api.types.is_string_dtype(shown[name].dtype):
            shown[name] = [visible(v) if isinstance(v, str) else v for v in shown[name]]
    return shown.style.format(precision=4, na_rep=MISSING)
