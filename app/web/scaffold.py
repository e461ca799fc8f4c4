"""What every page starts with: its place in the URL, the sidebar, its title and the model."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

import attnlens
from attnlens.app.web import urlstate
from attnlens.app.web.answers import right_answer
from attnlens.app.web.guides import guide
from attnlens.app.web.pickers import (
    made_trace,
    pair_input,
    target_input,
    text_input,
    traced,
)
from attnlens.app.web.resources import load_lens
from attnlens.app.web.safe_text import md
from attnlens.app.web.screen_size import screen_size
from attnlens.app.web.show import presenting
from attnlens.app.web.sidebar import sidebar
from attnlens.model.lenses.lens import RecordMode
from attnlens.record.trace import Trace


def page_start(url_path: str, title: str) -> attnlens.Lens | None:
    """Draw the shared sidebar and the title; the session's lens, or None with a message."""
    urlstate.remember("page", url_path)
    screen_size()  # a phone's screen, said once: its figures laid out for it
    name = sidebar(st.session_state.get("default_model", ""))
    st.title(title)
    guide(url_path)
    if not name:
        st.info("Pick a model in the sidebar, or type a folder or hub id.")
        return None
    return load_lens(name)


@dataclass(frozen=True)
class Started:
    """A page's model, the input it was given and the trace of that input."""

    lens: attnlens.Lens
    text: str
    target: str | None
    trace: Trace
    pair: str | None = None  # the second text of a sentence pair


Inputs = tuple[str, str | None, str | None]  # the text, the target and the second text


def traced_page(
    url_path: str,
    title: str,
    body: Callable[[Started], None],
    caption: bool = False,
    record: RecordMode = "weights",
) -> None:
    """page_start (and the model's description, with caption), then the text boxes and `body`
    drawn from their trace. A new text reruns the boxes and `body` alone, a fragment: the
    sidebar, the navigation and the title are not sent again (on Explore at 8 tokens the page
    around the figure cost more than the figure: docs/speed.md). On a projector the boxes are
    in the sidebar, where a fragment cannot draw, and the page reruns whole. record: the record
    the trace keeps (Lens.trace's; Explore's `auto` keeps scores past the budget)."""
    top = st.sidebar.container()  # on a projector the text boxes go first in the sidebar
    lens = page_start(url_path, title)
    if lens is None:
        return
    if caption:
        st.caption(md(lens.description))
    if presenting():
        with top:  # in sight above the model picker (at the sidebar's foot they were below
            inputs = text_inputs(lens)  # the fold of a 1080-line projector)
        _traced(lens, inputs, body, record)
    else:
        _typed(lens, body, record)


@st.fragment
def _typed(lens: attnlens.Lens, body: Callable[[Started], None], record: RecordMode) -> None:
    _traced(lens, text_inputs(lens), body, record)


def _traced(
    lens: attnlens.Lens, inputs: Inputs, body: Callable[[Started], None], record: RecordMode
) -> None:
    """body of the inputs' trace; only a message when they are bad. The body is drawn in one
    slot, which shows what runs and how far it is while a new input is traced (waits.py), in
    place of the last input's body greyed out."""
    text, target, pair = inputs
    place = st.empty()
    with contextlib.suppress(ValueError):  # its message is drawn below, in the slot
        made_trace(lens, text, target, pair=pair, record=record, place=place)
    with place.container():
        tr = traced(lens, text, target, pair=pair, record=record)  # the one just made
        if tr is not None:
            body(Started(lens, text, target, tr, pair))


def text_inputs(lens: attnlens.Lens) -> Inputs:
    """The text box, and the target and second-text boxes where the model reads them."""
    return text_input(lens), target_input(lens), pair_input(lens)


def true_alignment(started: Started) -> tuple[int, ...] | None:
    """The true source of each output token, when the model's task knows it and the decoder
    was given the right output; otherwise None, with a hint when only the output is wrong."""
    task = started.lens.capabilities.task
    reference = None if task is None else task.reference(started.text)
    if reference is None:
        return None
    output = started.lens.text_of(started.trace.tgt_tokens[1:])
    if output == reference.target:
        return reference.alignment
    wrong = right_answer(started.lens, started.text, output)  # None: another right answer
    if wrong is not None:
        st.caption(
            md(f"{wrong} Give it as the target to see the true alignment on cross-attention.")
        )
    return None  # the true sources are the reference's, token by token
