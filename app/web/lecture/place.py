"""Where the lecture is, kept in the session and in the address: ?page=lecture&deck=NAME&slide=N,
with the teacher's model, text, layer, head and step when they differ from the slide's."""

from __future__ import annotations

import streamlit as st

from attnlens.app.teaching.deck import Deck, Library
from attnlens.app.teaching.view import View
from attnlens.app.web.lecture.screen import Place
from attnlens.app.web.safe_text import md

DEFAULT_DECK = "section3"
SESSION = "_lec_place"
VIEW_KEYS = ("model", "text", "layer", "head", "step")
OLD_LESSONS = {"stacks": 1, "positions": 3, "sdpa": 4, "heads": 6, "masks": 8}  # ?page=lessons


def from_url(library: Library) -> Place:
    """The place a link names; a deck or slide that does not exist gets a message and the
    nearest that does."""
    params = st.query_params
    name = params.get("deck", DEFAULT_DECK)
    if name not in library.decks:
        fallback = DEFAULT_DECK if DEFAULT_DECK in library.decks else next(iter(library.decks))
        st.warning(md(f"No deck is named {name!r}; opening {fallback!r} (decks: "
                      f"{', '.join(sorted(library.decks))})."))  # fmt: skip
        name = fallback
    deck = library.decks[name]
    number = _slide_number(params.get("slide"), params.get("lesson"), deck)
    raw: dict[str, object] = {k: params.get(k) for k in VIEW_KEYS if params.get(k) is not None}
    for k in ("layer", "head", "step"):
        if k in raw:
            raw[k] = _int(raw[k])
    return Place(name, number - 1, View.from_dict(raw))


def _slide_number(given: str | None, lesson: str | None, deck: Deck) -> int:
    if given is None:
        return OLD_LESSONS.get(lesson or "", 1) if deck.name == DEFAULT_DECK else 1
    number = _int(given)
    if number is None or not 1 <= number <= len(deck.slides):
        st.warning(md(f"slide {given!r} is not in {deck.name!r}, which has slides 1 to "
                      f"{len(deck.slides)}; opening slide 1."))  # fmt: skip
        return 1
    return number


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def current(library: Library) -> Place:
    """This session's place: where it was, else where its address says."""
    place: Place | None = st.session_state.get(SESSION)
    if place is None or place.deck not in library.decks:
        place = from_url(library)
        st.session_state[SESSION] = place
    deck = library.decks[place.deck]
    if place.slide >= len(deck.slides):
        place = Place(place.deck, len(deck.slides) - 1, place.view)
    return place


def go(place: Place) -> None:
    """Move this session to place (a button's callback)."""
    st.session_state[SESSION] = place


def to_url(place: Place) -> None:
    """Write the place into the address, so the link opens exactly this slide and view."""
    wanted = {"deck": place.deck, "slide": str(place.slide + 1)}
    wanted.update({k: str(v) for k, v in place.view.to_dict().items()})
    for name, value in wanted.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    for name in VIEW_KEYS:
        if name not in wanted and name in st.query_params:
            del st.query_params[name]
    if "lesson" in st.query_params:
        del st.query_params["lesson"]
