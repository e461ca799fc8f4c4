"""The teacher's changes to a slide, out of the way in a popover: model, input, layer, head."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import streamlit as st

from attnlens.app.teaching.slides import Built
from attnlens.app.web.lecture.screen import Place
from attnlens.app.web.sidebar import bundled_names

W_MODEL, W_TEXT, W_LAYER, W_HEAD = "lec_w_model", "lec_w_text", "lec_w_layer", "lec_w_head"
AUTO = -1  # the head the slide chooses


def adjust(place: Place, model: str, text: str, built: Built, go: Callable[[Place], None]) -> None:
    """A popover with the slide's model, text, layer and head; each change moves the place
    (and so the class)."""
    with st.popover("⚙ Model, input, layer, head", width="stretch"):
        names = bundled_names()
        options = names if model in names else [*names, model]
        st.session_state[W_MODEL] = model
        st.selectbox("Model", options, key=W_MODEL, on_change=_changed, args=(place, go, "model"))
        st.session_state[W_TEXT] = text
        st.text_input("Input", key=W_TEXT, on_change=_changed, args=(place, go, "text"),
                      max_chars=2000)  # fmt: skip
        shown = built.shown
        if shown.kind is None:
            return
        st.session_state[W_LAYER] = shown.layer
        st.selectbox("Layer", list(range(shown.layers)), key=W_LAYER, on_change=_changed,
                     args=(place, go, "layer"))  # fmt: skip
        heads = [AUTO, *range(shown.heads)]
        st.session_state[W_HEAD] = place.view.head if place.view.head is not None else AUTO
        st.selectbox("Head", heads, key=W_HEAD, on_change=_changed, args=(place, go, "head"),
                     format_func=lambda h: f"the slide's choice (head {shown.head})"
                     if h == AUTO else f"head {h}")  # fmt: skip


def _changed(place: Place, go: Callable[[Place], None], what: str) -> None:
    value = st.session_state[{"model": W_MODEL, "text": W_TEXT, "layer": W_LAYER,
                              "head": W_HEAD}[what]]  # fmt: skip
    if what == "model":
        view = replace(place.view, model=str(value), text=None, layer=None, head=None, step=None)
    elif what == "text":
        view = replace(place.view, text=str(value).strip() or None, step=None)
    elif what == "head":
        view = replace(place.view, head=None if value == AUTO else int(value))
    else:
        view = replace(place.view, layer=int(value), head=None)
    go(Place(place.deck, place.slide, view))
