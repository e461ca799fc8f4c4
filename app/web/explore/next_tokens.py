"""Explore on a decoder-only model: its greedy continuation of the text, where an
encoder-decoder shows "Output: …", and each position's likeliest next tokens (docs/app.md).

Both come by value from the shared lens (`Lens.decode`, and `next_tokens` of its capabilities'
predictor, which only a decoder-only model has), once per text
in a session; they are drawn after the head view, in a slot above it, so a keystroke still
waits for the heatmap only. Past AT_ONCE tokens they wait for a click: each reads the whole
input again.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import attnlens
from attnlens.app.web import session_records, show, waits
from attnlens.app.web.pickers import memo
from attnlens.app.web.safe_text import md
from attnlens.app.web.scaffold import Started
from attnlens.model.lenses.parts import Predictor
from attnlens.record.errors import InputError
from attnlens.record.next_tokens import NextTokens
from attnlens.viz.decoding.next_tokens_table import next_tokens_table

CONTINUATION_TOKENS = 8  # greedy steps of the continuation, fewer when the model ends it
TOP = 3  # next tokens shown per position
TABLE_ROWS = 100  # positions the table shows: a longer input's first 99 and its last
AT_ONCE = 512  # tokens up to which they come with every text; past it, on request


def predictions(started: Started, slot: DeltaGenerator | None = None) -> None:
    """The continuation and the next-token table of a decoder-only model (nothing for others,
    nor when the text is followed by a target of the user's), drawn in `slot` when given."""
    lens, text, predictor = started.lens, started.text, started.lens.capabilities.predictor
    if predictor is None or started.target is not None:
        return
    key = (id(lens), lens.name, text)
    n, most = len(started.trace.input_tokens), lens.max_tokens
    with slot if slot is not None else st.container():
        if not _wanted(key, n, n < most):
            return
        if n >= most:
            full = f"the text fills the model's {most:,} positions"
            st.caption(md(f"No continuation: no room: {full}"))
        else:
            try:  # what decoding refuses (its memory budget) is said, as the trace says it
                continuation = memo("explore_continuation", key, lambda: _continued(lens, text))
                st.text("Continuation: " + continuation)
            except InputError as err:
                st.caption(md(f"No continuation: {err}"))
        try:  # likewise the logits' budget
            nt = memo("explore_next_tokens", key, lambda: _next_tokens(lens, predictor, text, n))
        except InputError as err:
            st.caption(md(f"No next-token predictions: {err}"))
            return
        next_token_table(lens, nt)


def _wanted(key: tuple[object, ...], T: int, room: bool) -> bool:
    """Whether to compute them now: at once up to AT_ONCE tokens; past that, on request (each
    runs the model over the whole input again, as long as the trace took, and anything the
    user does meanwhile waits), and then for as long as the text stays the same. room:
    whether the model has positions left to continue the text in (the button offers only
    what it will do)."""
    if T <= AT_ONCE or session_records.held().get("explore_next_tokens", (None,))[0] == key:
        return True
    label = (
        f"Continue the text and show each position's next tokens ({T:,} tokens: the model "
        "reads them twice more)"
        if room
        else f"Show each position's next tokens ({T:,} tokens: the model reads them again; "
        "the text fills its positions, so there is no room to continue it)"
    )
    return st.button(label, key="w_next_tokens")


def _continued(lens: attnlens.Lens, text: str) -> str:
    """_continue, saying what runs while it takes long (waits.py)."""
    what = f"Continuing the text with {lens.name}, at most {CONTINUATION_TOKENS} tokens"
    return waits.waited(None, waits.Wait(what), lambda: _continue(lens, text))


def _next_tokens(lens: attnlens.Lens, predictor: Predictor, text: str, n: int) -> NextTokens:
    """The predictor's next_tokens, saying what runs while it takes long (waits.py)."""
    what = f"Reading {n:,} tokens with {lens.name} for each position's likeliest next tokens"
    return waits.waited(None, waits.Wait(what), lambda: predictor.next_tokens(text, TOP))


def _continue(lens: attnlens.Lens, text: str) -> str:
    """The model's greedy continuation of text, at most CONTINUATION_TOKENS tokens, quoted so
    that the spaces it begins or ends with show (a line break as ⏎)."""
    run = lens.decode(text, "greedy", max_len=CONTINUATION_TOKENS)
    shown = lens.text_of(run.output_tokens)
    return quoted(shown) if shown else "none (the model ends the text here)"


def quoted(continuation: str) -> str:
    """The continuation in double quotes, line breaks and tabs drawn (⏎, ⇥)."""
    return '"' + continuation.replace("\n", "⏎").replace("\t", "⇥") + '"'


def next_token_table(lens: attnlens.Lens, nt: NextTokens) -> None:
    """Each position's TOP likeliest next tokens, in an expander under the continuation."""
    T = len(nt.tokens)
    label = f"Next tokens at each position (the {nt.k} likeliest, with their probabilities)"
    with st.expander(label):
        if T > TABLE_ROWS:
            st.caption(md(
                f"Positions 0 to {TABLE_ROWS - 2} and the last, {T - 1:,} (where the "
                f"continuation starts), of {T:,} are shown."
            ))  # fmt: skip
        frame = next_tokens_table(nt, TABLE_ROWS, lens.display_tokens)
        show.table(frame, "explore_next_tokens", "next-tokens")
