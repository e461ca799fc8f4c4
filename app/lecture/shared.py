"""What every session of the process shares: the decks read at start-up, the class store, the
records of each input and each slide built on them (built once, drawn for every student)."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import streamlit as st

from attnlens.app.classroom.store import ClassStore, open_store, store_url
from attnlens.app.lecture.deck import Deck, Library, read_library
from attnlens.app.lecture.live import LiveInput
from attnlens.app.lecture.slides import Built, build
from attnlens.app.lecture.view import View
from attnlens.app.state import shared_lens

FIGURE_HEIGHT = 640  # px: a 1080-line projector keeps room for the title and the buttons
FONT = 18
TICKS = 15


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


@st.cache_resource(show_spinner=False, max_entries=32)
def live_input(model: str, text: str) -> LiveInput:
    """An input's records, shared by every session looking at it."""
    return LiveInput(shared_lens(model), text)


@st.cache_resource(show_spinner=False, max_entries=128)
def built_slide(deck_name: str, number: int, view_json: str, model: str, text: str) -> Built:
    """A slide built once per view and process: every student of a class gets the same figure
    objects (never changed after this, so sharing them is safe)."""
    deck = library().decks[deck_name]
    slide = deck.slides[number - 1]
    built = build(slide, live_input(model, text), View.from_dict(json.loads(view_json)))
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
    fig.update_xaxes(tickfont_size=TICKS)
    fig.update_yaxes(tickfont_size=TICKS)
    for note in fig.layout.annotations:  # subplot titles and labels: a size up, in proportion
        note.font.size = round((note.font.size or FONT - 2) * 1.25)
    return fig


def find_deck(name: str) -> Deck | None:
    return library().decks.get(name)
