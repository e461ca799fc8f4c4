"""Download buttons whose files stay within the memory budget.

Streamlit (1.67) runs a callable given as a download's data when the button is clicked and
keeps what it returns in memory while it is served; it takes str, bytes or a file, not a
generator. So a file is written piece by piece into a temporary file on disk, and that file
is handed over: no second copy is built while it is written.

Serving it costs more than the file: Streamlit reads it into memory, slices that for the
browser's range request, and the socket keeps what the network has not taken yet (a 97 MB
record took the server 333 MB above its level, measured in one session). So a file is offered
only when SERVED_COPIES times its size bound fits the budget (ATTNLENS_MAX_RECORD_MB);
otherwise the button is disabled and says how large the file would be, and what to use instead.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any, BinaryIO

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnlens.app.web.safe_text import md
from attnlens.model.budget import RECORD_VAR, budget_bytes
from attnlens.record.export import megabytes

Writer = Callable[[IO[bytes]], None]
PLAIN_BYTES = 16 * 2**20  # larger files are sent gzip-compressed (docs/app.md#downloads)
GZIP_LEVEL = 3  # a 240 MB record: about 40% of its size in a few seconds
PLOTLY_JS_BYTES = 2 * 2**20  # plotly.js gzipped inside a standalone HTML figure (1.9 MB)
PNG_SCALE = 2  # a PNG is drawn at twice its size, for projectors
SVG_PER_JSON_BYTE = 8  # an SVG's text per byte of its figure's JSON (measured: 0.3 to 2.2)
SVG_BASE_BYTES = 2**20  # an SVG's styles and fonts
NUMBER_CHARS = 24  # the most one number of a figure takes in its JSON
# sent as they are: NPZ is a zip, and gzip makes a PNG no smaller
COMPRESSED = ("application/zip", "application/gzip", "image/png")
SERVED_COPIES = 4  # the server's memory per byte of a file while it is sent (3.4 measured)


class ExportTooLargeError(ValueError):
    """A file grew past its bound while it was being written."""


def export_limit() -> int:
    """The largest file a download may make, in bytes (the record budget)."""
    return budget_bytes()


def too_large(bound: int, instead: str | None = None) -> str | None:
    """Why a file of at most `bound` bytes is refused (and what to use `instead`), or None
    when sending it fits the budget."""
    limit = export_limit()
    if bound * SERVED_COPIES <= limit:
        return None
    why = (
        f"This file would take up to {megabytes(bound)}; sending it takes the server up to "
        f"{SERVED_COPIES} times that, above the limit of {megabytes(limit)} ({RECORD_VAR})."
    )
    return f"{why} {instead}" if instead else why


def text_writer(chunks: Callable[[], Iterable[str]]) -> Writer:
    """A writer of text pieces (UTF-8)."""

    def write(handle: IO[bytes]) -> None:
        for piece in chunks():
            handle.write(piece.encode("utf-8"))

    return write


def spooled(write: Writer, bound: int) -> Callable[[], BinaryIO]:
    """A download's data: when clicked, write the file to disk (refusing to pass `bound`
    bytes), then hand Streamlit the file to read once."""

    def build() -> BinaryIO:
        with tempfile.NamedTemporaryFile(prefix="attnlens-", delete=False) as spool:
            path = spool.name
            try:
                write(_Bounded(spool, bound))  # type: ignore[arg-type]  # write, flush, tell
            except BaseException:
                os.unlink(path)
                raise
        reader = open(path, "rb")  # noqa: SIM115 (Streamlit reads it; closed when dropped)
        os.unlink(path)  # the open file stays readable; nothing is left on disk
        return reader

    return build


class _Bounded:
    """A binary file that refuses to grow past a bound."""

    def __init__(self, inner: IO[bytes], bound: int) -> None:
        self.inner, self.bound, self.written = inner, bound, 0

    def write(self, data: bytes) -> int:
        self.written += len(data)
        if self.written > self.bound:
            raise ExportTooLargeError(f"the file passed {megabytes(self.bound)}")
        return self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()

    def tell(self) -> int:
        return self.written

    def seekable(self) -> bool:
        return False


def button(
    label: str,
    write: Writer,
    bound: int,
    file_name: str,
    mime: str,
    key: str,
    help: str | None = None,
    instead: str | None = None,
    refused: str | None = None,
) -> None:
    """A download button for a file of at most `bound` bytes, made when clicked; disabled,
    with its size, the limit and what to use `instead`, when sending it would pass the budget
    (or with `refused`, the caller's reason not to make it)."""
    refused = refused or too_large(bound, instead)
    if refused:
        st.caption(md(f"{label}: {refused}"))
    elif bound > PLAIN_BYTES and mime not in COMPRESSED:
        # Streamlit gzips text downloads as it serves them, at level 9 and in memory (the
        # file twice more); a file it is handed compressed is sent as it is
        write, file_name, mime = gzipped(write), f"{file_name}.gz", "application/gzip"
        help = f"{help + '; ' if help else ''}gzip-compressed: up to {megabytes(bound)} unpacked"
    st.download_button(
        label,
        data=b"" if refused else spooled(write, bound),
        file_name=file_name,
        mime=mime,
        key=key,
        on_click="ignore",
        disabled=refused is not None,
        help=refused or help,
    )


def gzipped(write: Writer) -> Writer:
    """The same file, gzip-compressed as it is written."""

    def compressed(handle: IO[bytes]) -> None:
        with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=GZIP_LEVEL, mtime=0) as out:
            write(out)  # type: ignore[arg-type]

    return compressed


def figure_bound(fig: go.Figure) -> int:
    """At most how many bytes the figure's JSON takes, counted without writing it (numpy
    arrays travel as base64 typed arrays: their text is counted as it is)."""
    return _json_bound(fig.to_plotly_json())


def _json_bound(value: Any) -> int:
    if isinstance(value, str):
        return len(json.dumps(value))
    if isinstance(value, Mapping):
        return 2 + sum(len(str(k)) + 4 + _json_bound(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return 2 + sum(_json_bound(v) + 1 for v in value)
    if isinstance(value, np.ndarray):
        return value.size * NUMBER_CHARS + 2 * value.size // max(1, value.shape[-1] or 1) + 2
    return NUMBER_CHARS


def image_bound(json_bytes: int, fmt: str, width: int, height: int) -> int:
    """At most how many bytes a PNG or SVG of the figure at width × height px takes: a PNG
    its pixels (RGBA, at PNG_SCALE, unpacked: deflate never makes them much larger); an SVG
    its figure's JSON (json_bytes, figure_bound) several times over, and a heatmap's pixels
    inside it (base64 PNG)."""
    if fmt == "png":
        w, h = width * PNG_SCALE, height * PNG_SCALE
        return w * h * 4 + h + SVG_BASE_BYTES
    return SVG_PER_JSON_BYTE * json_bytes + width * height * 4 * 4 // 3 + SVG_BASE_BYTES


def figure_name(kind: str, layer: int, head: int, view: str = "") -> str:
    """A figure's file name (without extension) by what it shows: "cross-layer0-head3",
    with the view after it when one head has several ("cross-layer0-head3-lines")."""
    return f"{kind}-layer{layer}-head{head}" + (f"-{view}" if view else "")


def html_writer(fig: go.Figure) -> Writer:
    """The figure with plotly.js inside, so it opens offline."""

    def write(handle: IO[bytes]) -> None:
        handle.write(str(fig.to_html(include_plotlyjs=True, full_html=True)).encode("utf-8"))

    return write


def image_writer(fig: go.Figure, fmt: str) -> Writer:
    """A PNG (at twice the size, for projectors) or SVG drawn by kaleido: seconds, not ms."""

    def write(handle: IO[bytes]) -> None:
        scale = PNG_SCALE if fmt == "png" else 1
        handle.write(bytes(fig.to_image(format=fmt, scale=scale)))

    return write
