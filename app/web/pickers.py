"""The controls several pages share: the input text, and kind / layer / head pickers."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import attnlens
from attnlens.app.web import session_records, urlstate, waits
from attnlens.app.web.resources import shared_trace
from attnlens.app.web.safe_text import md, md_items
from attnlens.model.lenses.lens import RecordMode
from attnlens.record.norms import MEASURES, NOT_RECORDED, Measure, check_measure
from attnlens.record.trace import Kind, Trace

KIND_LABELS: dict[str, str] = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention",
}
T = TypeVar("T")
LIVE = "300ms"  # the text boxes commit after this pause in typing, so figures follow the typing
LONG_TEXT_CHARS = 200  # a text longer than this is edited in a box of several lines
LONG_TEXT_HEIGHT = 160  # px: about six lines


def memo(slot: str, key: Hashable, compute: Callable[[], T]) -> T:
    """The last result of one computation in this session, recomputed only when key changes
    (kept while the session is connected: session_records)."""
    records = session_records.held()
    last = records.get(slot)
    if last is not None and last[0] == key:
        return last[1]  # type: ignore[no-any-return]
    records.pop(slot, None)  # the old record goes before the new one is computed
    value = compute()
    records[slot] = (key, value)
    return value


def text_input(lens: attnlens.Lens) -> str:
    """The input text, shared by every page and the URL. It starts as the model's example, and
    follows the example when another model is picked unless the user has typed their own."""
    held = st.session_state.get("w_text", urlstate.remembered("text", None))
    shown_example = st.session_state.get("_example")
    if held is not None and held == shown_example != lens.example:
        st.session_state["w_text"] = lens.example
    st.session_state["_example"] = lens.example
    urlstate.prepare("w_text", "text", lens.example, str)
    if len(str(st.session_state.get("w_text", ""))) > LONG_TEXT_CHARS:  # a paragraph: read it all
        text = st.text_area(
            "Text",
            key="w_text",
            height=LONG_TEXT_HEIGHT,
            help=f"at most {lens.max_tokens} tokens; Ctrl+Enter (or a click outside) applies it",
        )
    else:
        text = st.text_input(
            "Text",
            key="w_text",
            help=f"at most {lens.max_tokens} tokens; the figures follow as you type",
            live=LIVE,
        )
    urlstate.remember("text", text)
    return str(text)


def measure_radio(where: DeltaGenerator, held: bool, missing: str | None) -> Measure:
    """Explore's and Decode's "Measure: weight / norm": the weights αᵢⱼ, or αᵢⱼ ‖f(xⱼ)‖, what
    each key gave the head's output (record/norms.py), kept in the address as `measure`. Where
    the record holds no norms (not held) it offers the weight only, greyed, saying why
    (missing: the record's own reason). The greyed control is one of its own, on weight: it
    showed the user's "norm" checked over a figure of weights; the pick stays for the next
    model that holds norms."""
    why = "αᵢⱼ ‖f(xⱼ)‖: how much each key gave the head's output, not only where it looked"
    if not held:
        where.radio(
            "Measure", MEASURES, index=0, key="w_measure_greyed", horizontal=True,
            disabled=True, help=f"{why}. {missing or NOT_RECORDED}",
        )  # fmt: skip
        return "weight"
    urlstate.prepare("w_measure", "measure", "weight", check_measure, list(MEASURES))
    picked = where.radio("Measure", MEASURES, key="w_measure", horizontal=True, help=why)
    urlstate.remember("measure", picked)
    return check_measure(picked) if picked else "weight"


def target_input(lens: attnlens.Lens) -> str | None:
    """The optional teacher-forcing target of an encoder-decoder model (None: its own output)."""
    if not lens.capabilities.takes_target:
        return None
    return _optional_text(
        "Target (optional: teacher forcing; empty = the model's own greedy output)",
        "w_target",
        "target",
    )


def pair_input(lens: attnlens.Lens) -> str | None:
    """The optional second text of a sentence pair, for models that read pairs (BERT's
    sentence B: its own segment ids); None for one text."""
    if not lens.capabilities.reads_pairs:
        return None
    return _optional_text(
        "Second text (optional: a sentence pair, read with its own segment ids as sentence B)",
        "w_pair",
        "pair",
    )


def _optional_text(label: str, key: str, url_key: str) -> str | None:
    """A text box that may stay empty (None); its text is in the URL under url_key while it
    has any."""
    urlstate.prepare(key, url_key, "", str)
    text = st.text_input(label, key=key, live=LIVE)
    if text:
        urlstate.remember(url_key, text)
    else:
        urlstate.forget(url_key)
    return str(text) or None


def traced(
    lens: attnlens.Lens,
    text: str,
    target: str | None,
    slot: str = "trace",
    pair: str | None = None,
    record: RecordMode = "weights",
) -> Trace | None:
    """The trace of text (made_trace's), kept as `record` asks (Lens.trace); a message in place
    of bad input, its warnings above it."""
    try:
        tr = made_trace(lens, text, target, slot, pair, record)
    except ValueError as err:
        st.error(md(err))
        return None
    if tr.warnings:
        st.warning(md_items(tr.warnings))
    return tr


def made_trace(
    lens: attnlens.Lens,
    text: str,
    target: str | None,
    slot: str = "trace",
    pair: str | None = None,
    record: RecordMode = "weights",
    place: DeltaGenerator | None = None,
) -> Trace:
    """The trace of text, memoised per session and shared between sessions (its arrays are
    read-only); the lens's ValueError for bad input. While it is made, `place` shows what runs
    and how far it is (waits.py), in place of the last input's page."""

    def made() -> Trace:
        tokens = token_count(lens, text)
        wait = waits.Wait(trace_line(lens, tokens), waits.speeds().expected(lens.name, tokens))
        trace = partial(shared_trace, lens, text, target, pair, record)
        return waits.waited(place, wait, partial(waits.timed, lens.name, tokens, trace))

    return memo(slot, (lens.name, id(lens), text, target, pair, record), made)


def token_count(lens: attnlens.Lens, text: str) -> int:
    """How many tokens the model reads for text (0 when it cannot say before the trace)."""
    runs = lens.capabilities.token_runs
    if runs is None:
        return 0
    try:
        return len(runs.token_ids(text))
    except ValueError:
        return 0


def trace_line(lens: attnlens.Lens, tokens: int) -> str:
    """What a trace of `tokens` tokens does, in words: "Reading 4,001 tokens with gpt2 (12
    layers × 12 heads, every head's weights measured)"."""
    info = lens.info
    what = f"{tokens:,} tokens" if tokens else "the text"
    return (
        f"Reading {what} with {lens.name} ({info.n_layers} layers × {info.n_heads} heads, "
        "every head measured)"
    )


def kind_picker(tr: Trace, where: st.delta_generator.DeltaGenerator | None = None) -> Kind:
    """Which attention: encoder self, decoder self or cross (those the record holds)."""
    kinds = list(tr.kinds)
    default = tr.model.default_kind if tr.model.default_kind in kinds else kinds[-1]
    urlstate.prepare("w_kind", "kind", default, None, kinds)
    kind: Kind = (where or st).selectbox(
        "Attention", kinds, key="w_kind", format_func=KIND_LABELS.__getitem__
    )
    urlstate.remember("kind", kind)
    return kind


def layer_head_pickers(
    n_layers: int, n_heads: int, cols: tuple[st.delta_generator.DeltaGenerator, ...] | None = None
) -> tuple[int, int]:
    """Layer and head, counted from 0 as everywhere in attnlens; n_layers × n_heads of the
    kind shown (`ModelInfo.shape(kind)`: an encoder and its decoder may differ). A layer or
    head held from another kind that this one lacks falls back to the default."""
    for key, count in (("w_layer", n_layers), ("w_head", n_heads)):
        held = st.session_state.get(key)
        if isinstance(held, int) and held >= count:
            del st.session_state[key]
    left, right = cols or st.columns(2)
    urlstate.prepare("w_layer", "layer", n_layers - 1, int, list(range(n_layers)))
    urlstate.prepare("w_head", "head", 0, int, list(range(n_heads)))
    layer = int(left.selectbox("Layer", list(range(n_layers)), key="w_layer"))
    head = int(right.selectbox("Head", list(range(n_heads)), key="w_head"))
    urlstate.remember("layer", layer)
    urlstate.remember("head", head)
    return layer, head
