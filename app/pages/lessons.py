"""Lessons: §3 of the paper for a class, each idea beside a live figure; predict, then reveal."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

import viz
from app import show, urlstate
from app.frame import traced_page_start
from app.lessons_text import LESSONS, Lesson
from app.safe_text import md
from model.trace import Kind, Trace
from viz.labels import visible
from viz.sdpa_steps import furthest_allowed, strongest_key


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


def _layer(tr: Trace, which: str) -> int:
    return 0 if which == "first" else tr.model.n_layers - 1


def _figure(name: str, tr: Trace, kind: Kind, layer: int) -> go.Figure:
    """The lesson's figures by name; every one is a viz function on the live trace."""
    view, _, arg = name.partition(":")
    if view == "stats":
        return viz.head_stats_chart(viz.head_statistics(tr), arg, "entropy")  # type: ignore[arg-type]
    if view == "masks":
        return viz.masks_view(tr, arg or kind)  # type: ignore[arg-type]
    if view == "lines":
        return viz.lines_view(tr, arg, _layer(tr, "last"))  # type: ignore[arg-type]
    if view == "positional":
        return viz.positional_view(tr)
    if view == "model_view":
        return viz.model_view(tr, kind)
    if view == "alignment":
        return viz.cross_alignment(tr, layer, 0)
    return viz.head_heatmap(tr, kind, layer, 0)


def lesson(item: Lesson, tr: Trace) -> None:
    kind: Kind = item.kind  # type: ignore[assignment]
    if kind not in tr.kinds:
        st.info(md(f"This lesson needs {kind.replace('_', ' ')} attention; this model has none."))
        return
    layer = _layer(tr, item.layer)
    text_col, fig_col = st.columns([2, 3])
    with text_col:
        st.header(item.title)
        st.markdown(item.body)  # our own fixed words, no user text
    with fig_col:
        show.figure(_figure(item.context, tr, kind, layer), f"context_{item.key}", item.key)
    predict_then_reveal(item, tr, kind, layer)


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
    show.figure(_figure(item.reveal, tr, kind, layer), f"reveal_{item.key}", f"{item.key}-reveal")
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
