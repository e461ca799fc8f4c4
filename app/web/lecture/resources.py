"""What every session of the process shares: the decks read at start-up, the class store, the
records of each input and each slide built on them (built once, drawn for every student)."""

from __future__ import annotations

import functools
import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components

from attnlens.app.classroom.board import VersionBoard, shared_board
from attnlens.app.classroom.follow_page import FONT_FILES
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import open_store, store_url
from attnlens.app.teaching.deck import Deck, Library, read_library
from attnlens.app.teaching.deck_questions import build_in_deck
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.prefetch import SlideCache
from attnlens.app.teaching.slide_sizes import projected, screened
from attnlens.app.teaching.slides import Built
from attnlens.app.teaching.view import View
from attnlens.app.web.resources import shared_lens

FONT_PATTERNS = ("SourceSansVF-Upright*.woff2", "SourceSansVF-Italic*.woff2")  # Streamlit's


@st.cache_resource(show_spinner=False)
def library() -> Library:
    """The decks, read once when the first page of the process asks (at start-up)."""
    return read_library()


def this_store() -> ClassStore:
    """The class store of this process (one per URL, shared with the routes and the board; its
    connection is thread-safe)."""
    return open_store(store_url())


def version_board(url: str) -> VersionBoard:
    """The process's board of class versions (one thread), shared with the follow route that
    students' browsers wait on (app/web/served.py)."""
    return shared_board(url)


@st.cache_resource(show_spinner=False)
def follow_signal(url: str) -> Callable[..., Any]:
    """The component that draws a following student's slide (app/classroom/follow_page.py),
    with the app's own font beside it."""
    folder = version_board(url).folder
    media = Path(st.__file__).parent / "static" / "static" / "media"
    for name, pattern in zip(FONT_FILES, FONT_PATTERNS, strict=True):
        found = sorted(media.glob(pattern))
        if found:  # none in another Streamlit: the page falls back to a system sans-serif
            shutil.copyfile(found[0], folder / name)
    return components.declare_component("attnlens_follow", path=str(folder))


@st.cache_resource(show_spinner=False, max_entries=32)
def live_input(model: str, text: str) -> LiveInput:
    """An input's records, shared by every session looking at it."""
    return LiveInput(shared_lens(model), text)


SLIDES = SlideCache()


def slide_key(
    deck_name: str, number: int, view: View, model: str, text: str, projector: bool
) -> tuple[str, ...]:
    where = "projector" if projector else "screen"
    return (deck_name, str(number), json.dumps(view.to_dict(), sort_keys=True), model, text, where)


def built_slide(
    deck_name: str, number: int, view: View, model: str, text: str, projector: bool = True
) -> Built:
    """A slide built once per view, size and process: every student of a class gets the same
    figure objects (never changed after this, so sharing them is safe). `projector`: every text
    at the projector's size (the lecturer, presentation mode), else a student's screen's."""
    live = live_input(model, text)
    return SLIDES.get(slide_key(deck_name, number, view, model, text, projector),
                      lambda: _build(deck_name, number, view, live, projector))  # fmt: skip


PREFETCH_AFTER_SECONDS = 1.5  # the next slide is built once a class of 300 has this one


def prefetch_slide(deck_name: str, number: int, view: View, model: str, text: str) -> None:
    """Build a slide in the background (the next one, while the class looks at this one), for
    the projector and for the students' screens; started a moment later, so that its model
    run does not take the cores from the class fetching the slide just shown (300 students,
    the first move forward: p95 1.02, 2.20 and 1.48 s with it at once, 0.71 and 0.77 s after)."""
    live = live_input(model, text)
    for projector in (True, False):
        make = functools.partial(_build, deck_name, number, view, live, projector)
        key = slide_key(deck_name, number, view, model, text, projector)
        later = threading.Timer(PREFETCH_AFTER_SECONDS, SLIDES.prefetch, args=(key, make))
        later.daemon = True
        later.start()


def _build(deck_name: str, number: int, view: View, live: LiveInput, projector: bool) -> Built:
    built = build_in_deck(library().decks[deck_name].slides, number - 1, live, view)
    for fig in (built.figure, built.reveal):
        if fig is not None:
            sized(fig, projector)
    return built


def sized(fig: go.Figure, projector: bool) -> go.Figure:
    """The figure, in place, for a projector or for a student's own screen."""
    return projected(fig) if projector else screened(fig)


def find_deck(name: str) -> Deck | None:
    return library().decks.get(name)
