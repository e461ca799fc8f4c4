"""Explore's token sets: type a word (every place the text has it), positions or a range, as a set
of queries or of keys, and see that set's attention in every layer and head at once, then the
enlarged head's profile over positions (analysis/token_sets.py; docs/app.md, Explore).

A fragment of its own: typing a set reruns this section alone. A click on a head's square picks
that head for the whole page (the enlarged heatmap or overview follows), so it reruns the page."""

from __future__ import annotations

from functools import partial

import streamlit as st

from attnlens.analysis.token_sets import SIDES, Side, parse_positions, set_attention
from attnlens.app.web import show, waits
from attnlens.app.web.explore.long_head import DRAWN_FOR, FOLLOWING, ZOOM, held_head, is_long
from attnlens.app.web.pickers import memo
from attnlens.app.web.safe_text import md
from attnlens.record.norms import Measure
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.colour_scale import Scale
from attnlens.viz.measures.token_sets import describe, token_set_grid, token_set_profile
from attnlens.viz.shared.labels import visible

GRID_KEY = "token_set_grid"
PICKED = "_token_set_picked"  # set by a click on a head: the page reruns whole with that head
NAMED_UP_TO = 12  # the caption names this many of the set's positions, then counts the rest
SIDE_LABELS = {"queries": "Queries (where they look)", "keys": "Keys (what they receive)"}
NO_ZOOM = "_token_set_no_zoom"  # a window's set asked for while the head was not zoomed


def _picked(n_layers: int, n_heads: int) -> None:
    """A click on a head's square: that layer and head for the pickers (read before they are
    drawn), and a note for the section to rerun the page."""
    point = show.clicked_point(GRID_KEY)
    if point is None:
        return
    layer, head = _index(point.get("y")), _index(point.get("x"))
    if layer is not None and head is not None and layer < n_layers and head < n_heads:
        st.session_state["w_layer"], st.session_state["w_head"] = layer, head
        st.session_state[PICKED] = True


def _index(value: object) -> int | None:
    """A square's layer or head as the browser sent it (a whole number ≥ 0), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        return None
    return int(value) if value >= 0 else None


@st.fragment
def token_sets(tr: Trace, kind: Kind, scale: Scale, measure: Measure = "weight") -> None:
    """The set's controls, its every-head grid and the enlarged head's profile, in the
    measure the page shows (weights, or αᵢⱼ ‖f(xⱼ)‖)."""
    if st.session_state.pop(PICKED, False):
        st.rerun()  # a head picked on the grid: the enlarged head and the grid's outline follow
    st.subheader("Choose tokens, see where they look")
    row = st.container(horizontal=True)
    side: Side = row.radio(
        "A set of", SIDES, key="w_set_side", horizontal=True,
        format_func=SIDE_LABELS.__getitem__,
    )  # fmt: skip
    typed = row.text_input(
        "Tokens", key="w_set_text", placeholder="a word, 12, 40-60",
        help="comma-separated: a word or phrase (every place the text has it), a position, "
        "or a range of positions (both ends in), counted from 0",
    )  # fmt: skip
    if is_long(tr, kind):
        from_window(row, (id(tr), kind))
    if st.session_state.pop(NO_ZOOM, False):
        st.info("Drag a box on the enlarged head first: its queries or keys become the set.")
    if not typed:
        st.caption("Type a word, positions or a range to see the set's attention in every head.")
        return
    queries, keys = tr.shown(kind)
    tokens = queries if side == "queries" else keys
    try:
        positions = parse_positions(typed, tokens, side)
        L, H = tr.model.shape(kind)
        what = waits.Wait(f"Weighing the set of {len(positions):,} {side} in every head "
                          f"({L} layers × {H} heads)")  # fmt: skip
        result = memo("token_set", (tr, kind, side, positions, measure), lambda: waits.waited(
            None, what, lambda: set_attention(tr, kind, side, positions, measure)))  # fmt: skip
    except ValueError as err:  # names nothing, or more than the weights a set may need
        st.error(md(f"{err}{elsewhere(typed, tr.shown(kind), side)}"))
        return
    layer, head = held_head(tr, kind)
    st.session_state[DRAWN_FOR] = (layer, head, measure)  # long_head reruns the page on a move
    st.session_state.pop(FOLLOWING, None)
    st.caption(md(f"The set: {named(positions, tokens)}"))
    L, H = tr.model.shape(kind)
    show.figure(
        token_set_grid(tr, result, scale, (layer, head)), GRID_KEY,
        f"{kind}-{side}-set", on_click=partial(_picked, L, H),
    )  # fmt: skip
    show.figure(
        token_set_profile(tr, result, layer, head), "token_set_profile",
        f"{kind}-layer{layer}-head{head}-{side}-set",
    )  # fmt: skip
    st.caption(md(describe(result) + "; click a head's square to enlarge it above."))


def named(positions: tuple[int, ...], tokens: tuple[str, ...]) -> str:
    """'3 · cat, 9 · cat' for the first NAMED_UP_TO positions, then how many in all."""
    shown = ", ".join(f"{p} · {visible(tokens[p])}" for p in positions[:NAMED_UP_TO])
    more = len(positions) - NAMED_UP_TO
    return f"{shown} … ({len(positions)} positions)" if more > 0 else shown


def from_window(row: st.delta_generator.DeltaGenerator, shown: tuple[int, Kind]) -> None:
    """Buttons that make the zoomed window's queries, or its keys, the set (read when clicked:
    a zoom reruns the head alone, not this section). shown: the trace's id and the kind,
    never the trace, which a callback kept in the session's state would hold in memory."""
    labels: dict[Side, str] = {"queries": "Its queries", "keys": "Its keys"}
    for side, label in labels.items():
        row.button(
            label, key=f"w_set_from_{side}", on_click=partial(_take_window, shown, side),
            help=f"the {side} of the window zoomed into on the enlarged head",
        )  # fmt: skip


def _take_window(shown: tuple[int, Kind], side: Side) -> None:
    typed = window_range(st.session_state.get(ZOOM), shown, side)
    if typed is None:
        st.session_state[NO_ZOOM] = True
        return
    st.session_state["w_set_side"], st.session_state["w_set_text"] = side, typed


def window_range(held: object, shown: tuple[int, Kind], side: Side) -> str | None:
    """'r0-r1' (both ends in) of the zoomed window's queries or keys, as typed in the set's
    box; None unless the held zoom is of this trace and kind."""
    if not (isinstance(held, tuple) and len(held) == 3 and held[0] == shown):
        return None
    start, stop = held[1] if side == "queries" else held[2]
    return f"{start}-{stop - 1}"


def elsewhere(typed: str, tokens: tuple[tuple[str, ...], tuple[str, ...]], side: Side) -> str:
    """'; the keys have it: …' where a set the chosen side lacks names positions of the other
    side (cross-attention's queries and keys are different texts); '' otherwise."""
    other: Side = "keys" if side == "queries" else "queries"
    if tokens[0] == tokens[1]:
        return ""
    try:
        parse_positions(typed, tokens[1] if other == "keys" else tokens[0], other)
    except ValueError:
        return ""
    return f"; the {other} have it: pick {SIDE_LABELS[other]}"
