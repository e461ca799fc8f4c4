"""What every session of the process shares: the decks read at start-up, the class store, the
records of each input and each slide built on them (built once, drawn for every student)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components

from attnlens.app.teaching.board import VersionBoard
from attnlens.app.teaching.class_store import ClassStore, open_store, store_url
from attnlens.app.teaching.deck import Deck, Library, read_library
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.prefetch import SlideCache
from attnlens.app.teaching.slides import Built, build
from attnlens.app.teaching.view import View
from attnlens.app.web.resources import shared_lens

FIGURE_HEIGHT = 640  # px: a 1080-line projector keeps room for the title and the buttons
FONT = 18
TICKS = 15
LABELS = 16  # legends and axis titles


@st.cache_resource(show_spinner=False)
def library() -> Library:
    """The decks, read once when the first page of the process asks (at start-up)."""
    return read_library()


@st.cache_resource(show_spinner=False)
def class_store(url: str) -> ClassStore:
    """The store of this process, opened once (its connection is thread-safe)."""
    return open_store(url)


def this_store() -> ClassStore:
    return class_store(store_url())


@st.cache_resource(show_spinner=False)
def version_board(url: str) -> VersionBoard:
    """The process's board of class versions (one thread), for students' browsers to poll."""
    return VersionBoard(class_store(url))


@st.cache_resource(show_spinner=False)
def follow_signal(url: str) -> Callable[..., Any]:
    """The invisible component that reruns a student's page when the class moves."""
    return components.declare_component("attnlens_follow", path=str(version_board(url).folder))


@st.cache_resource(show_spinner=False, max_entries=32)
def live_input(model: str, text: str) -> LiveInput:
    """An input's records, shared by every session looking at it."""
    return LiveInput(shared_lens(model), text)


SLIDES = SlideCache()


def slide_key(deck_name: str, number: int, view: View, model: str, text: str) -> tuple[str, ...]:
    return (deck_name, str(number), json.dumps(view.to_dict(), sort_keys=True), model, text)


def built_slide(deck_name: str, number: int, view: View, model: str, text: str) -> Built:
    """A slide built once per view and process: every student of a class gets the same figure
    objects (never changed after this, so sharing them is safe)."""
    live = live_input(model, text)
    return SLIDES.get(slide_key(deck_name, number, view, model, text),
                      lambda: _build(deck_name, number, view, live))  # fmt: skip


def prefetch_slide(deck_name: str, number: int, view: View, model: str, text: str) -> None:
    """Build a slide in the background (the next one, while the class looks at this one)."""
    live = live_input(model, text)
    SLIDES.prefetch(slide_key(deck_name, number, view, model, text),
                    lambda: _build(deck_name, number, view, live))  # fmt: skip


def _build(deck_name: str, number: int, view: View, live: LiveInput) -> Built:
    slide = library().decks[deck_name].slides[number - 1]
    built = build(slide, live, view)
    for fig in (built.figure, built.reveal):
        if fig is not None:
            projected(fig)
    return built


def projected(fig: go.Figure) -> go.Figure:
    """Projector size in place: large type, a fixed height, no background of its own (so it
    sits on a light or a dark page alike)."""
    fig.update_layout(
        font={"size": FONT},
        height=FIGURE_HEIGHT,
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
    )
    fig.update_layout(legend_font_size=LABELS)  # set by the figures for a screen: 12 px
    fig.update_xaxes(tickfont_size=TICKS, title_font_size=LABELS)
    fig.update_yaxes(tickfont_size=TICKS, title_font_size=LABELS)
    for note in fig.layout.annotations:  # subplot titles and labels: a size up, in proportion
        note.font.size = round((note.font.size or FONT - 2) * 1.25)
    return fig


def find_deck(name: str) -> Deck | None:
    return library().decks.get(name)
