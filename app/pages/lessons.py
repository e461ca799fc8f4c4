"""Lessons: §3 of the paper for a class, each idea beside a live figure; predict, then reveal."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from attnlens import viz
from attnlens.app import show, urlstate
from attnlens.app.inputs import KIND_LABELS
from attnlens.app.lessons_text import LESSONS, Lesson
from attnlens.app.safe_text import md
from attnlens.app.scaffold import traced_page_start
from attnlens.record.trace import Kind, Trace
from attnlens.viz.labels import visible
from attnlens.viz.sdpa_steps import furthest_allowed, strongest_key


def page() -> None:
    started = traced_page_start("lessons", "Lessons: Attention Is All You Need, §3")
    if started is None:
        return
    tr = started.trace
    titles = {lesson.key: lesson.title for lesson in LESSONS}
    urlstate.prepare("w_lesson", "lesson", LESSONS[0].key, str, list(titles))
    key = st.radio("Lesson", list(titles), format_func=titles.__getitem__, key="w_lesson")
    urlstate.remember("lesson", key)
    lesson(next(x for x in LESSONS if x.key == key), tr)


def _layer(tr: Trace, which: str, kind: Kind) -> int:
    return 0 if which == "first" else tr.model.shape(kind)[0] - 1


def _figure(name: str, tr: Trace, kind: Kind, layer: int) -> go.Figure:
    """The lesson's figures by name; every one is a viz function on the live trace. A figure
    naming a kind of attention the model lacks shows the lesson's kind instead."""
    view, _, arg = name.partition(":")
    if arg and arg not in tr.kinds:
        arg = kind
    if view == "stats":
        return viz.head_stats_chart(viz.head_statistics(tr), arg, "entropy")  # type: ignore[arg-type]
    if view == "masks":
        return viz.masks_view(tr, arg or kind)  # type: ignore[arg-type]
    if view == "lines":
        return viz.lines_view(tr, arg, _layer(tr, "last", arg))  # type: ignore[arg-type]
    if view == "positional":
        return viz.positional_view(tr)
    if view == "model_view":
        return viz.model_view(tr, kind)
    if view == "alignment" and "cross" in tr.kinds:
        return viz.cross_alignment(tr, layer, 0)
    return viz.head_heatmap(tr, kind, layer, 0)


def lesson(item: Lesson, tr: Trace) -> None:
    kind = stand_in(item.kind, tr)  # type: ignore[arg-type]
    if kind != item.kind:
        wanted, shown = KIND_LABELS[item.kind], KIND_LABELS[kind]
        st.caption(md(f"{tr.model.name} has no {wanted}: this lesson uses its {shown} instead."))
    layer = _layer(tr, item.layer, kind)
    text_col, fig_col = st.columns([2, 3])
    with text_col:
        st.header(item.title)
        st.markdown(item.body)  # our own fixed words, no user text
    with fig_col:
        drawn(item.context, tr, kind, layer, f"context_{item.key}", item.key)
    predict_then_reveal(item, tr, kind, layer)


def stand_in(kind: Kind, tr: Trace) -> Kind:
    """The lesson's kind of attention, or the nearest this model has: the other stack's
    self-attention first (a decoder-only or encoder-only model), then whatever it records."""
    if kind in tr.kinds:
        return kind
    nearest: dict[str, tuple[Kind, ...]] = {
        "encoder_self": ("decoder_self",), "decoder_self": ("encoder_self",), "cross": (),
    }  # fmt: skip
    return next((k for k in nearest[kind] if k in tr.kinds), tr.kinds[0])


def drawn(name: str, tr: Trace, kind: Kind, layer: int, key: str, file_name: str) -> None:
    """One of the lesson's figures, or a message where this model cannot give it."""
    try:
        fig = _figure(name, tr, kind, layer)
    except ValueError as err:
        st.info(md(err))
        return
    show.figure(fig, key, file_name)


def predict_then_reveal(item: Lesson, tr: Trace, kind: Kind, layer: int) -> None:
    st.subheader("Predict, then reveal")
    st.markdown(item.prompt)  # fixed words
    q_tokens, k_tokens = tr.tokens(kind)
    labels = [f"{i} · {visible(t)}" for i, t in enumerate(q_tokens)]
    keys = [f"{i} · {visible(t)}" for i, t in enumerate(k_tokens)]
    cols = st.columns(2)
    query = cols[0].selectbox(
        "Query position", range(len(labels)), format_func=labels.__getitem__, key=f"w_q_{item.key}"
    )
    guess = cols[1].selectbox(
        "Your guess", range(len(keys)), format_func=keys.__getitem__, key=f"w_guess_{item.key}"
    )
    revealed = f"_revealed_{item.key}"
    if not st.session_state.get(revealed):
        if st.button("Reveal", key=f"reveal_{item.key}", type="primary"):
            st.session_state[revealed] = True
            st.rerun()
        return
    answer = _answer(item, tr, kind, layer, int(query))
    if answer == guess:
        st.success(md(f"Right: the answer is {keys[answer]}."))
    else:
        st.warning(md(f"Not quite: the answer is {keys[answer]}; you guessed {keys[int(guess)]}."))
    drawn(item.reveal, tr, kind, layer, f"reveal_{item.key}", f"{item.key}-reveal")
    if st.button("Hide again", key=f"hide_{item.key}"):
        st.session_state[revealed] = False
        st.rerun()


def _answer(item: Lesson, tr: Trace, kind: Kind, layer: int, query: int) -> int:
    if item.answer == "furthest":
        mask = tr.mask(kind)
        assert mask is not None
        return furthest_allowed(mask, query)
    weights = tr.attention(kind)
    assert weights is not None
    return strongest_key(weights[layer, 0], query)


page()
