"""Predict, then reveal, on screen: alone with the lecture, or as the teacher of a class (a
student following a class answers in the slide their browser draws: follow_page.py)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnlens.app.classroom.limits import ClassError
from attnlens.app.classroom.store import ClassStore
from attnlens.app.teaching.questions import NoQuestion, Question
from attnlens.app.teaching.slide_sizes import projected
from attnlens.app.web.safe_text import md
from attnlens.viz.lecture.reveal import class_answers

LETTERS = "ABCDEFGHIJ"
REVEALED = "_lec_revealed"  # session key: the question id revealed by a lone lecturer
HISTOGRAM_HEIGHT = 300
FIGURE_CONFIG = {"displayModeBar": False}  # no Plotly toolbar over a figure on a projector


def option(question: Question, i: int) -> str:
    """An option as shown, lettered: "B · 3 · e" (plain text, escaped for Markdown)."""
    return md(f"{LETTERS[i]} · {question.options[i]}")


def no_question(question: Question | NoQuestion | None) -> bool:
    """Show why a slide asks nothing, if it meant to; True when there is no question."""
    if isinstance(question, NoQuestion):
        st.caption(md(f"No question on this input: {question.reason}."))
        return True
    return question is None


def locally_revealed(question: Question | NoQuestion | None) -> bool:
    return isinstance(question, Question) and st.session_state.get(REVEALED) == question.id


def local(question: Question | NoQuestion | None) -> None:
    """A lecture without a class: guess, reveal, see why."""
    if no_question(question):
        return
    assert isinstance(question, Question)
    st.subheader("Predict, then reveal")
    st.markdown(md(question.prompt))
    guess = st.radio(
        "Your guess",
        range(len(question.options)),
        index=None,
        format_func=lambda i: option(question, i),
        key=f"lec_guess_{question.id}",
    )
    if not locally_revealed(question):
        st.button(
            "Reveal", key="lec_reveal", type="primary", on_click=_set_revealed, args=(question.id,)
        )
        return
    result(question, guess)
    st.button("Hide the answer", key="lec_hide", on_click=_set_revealed, args=(None,))


def _set_revealed(question_id: str | None) -> None:
    st.session_state[REVEALED] = question_id


def result(question: Question, chosen: int | None, whose: str = "You") -> None:
    """Right or not, the right option, and one line of why."""
    right = option(question, question.answer)
    if chosen is None:
        st.info(f"The answer: {right}")  # fixed words around md() text
    elif chosen == question.answer:
        st.success(f"Right: {right}")  # fixed words around md() text
    else:
        st.warning(
            f"Not quite: the answer is {right} ({whose.lower()} chose {option(question, chosen)})"
        )
    st.markdown(f"**Why:** {md(question.why)}")  # fixed words around md() text


def teacher(
    question: Question | NoQuestion | None,
    store: ClassStore,
    code: str,
    revealed: bool,
    reveal: Callable[[], None],
) -> None:
    """The teacher's side: the question and its options, answers arriving, then the reveal."""
    if no_question(question):
        return
    assert isinstance(question, Question)
    st.subheader("Predict, then reveal")
    st.markdown(md(question.prompt))
    st.markdown("  \n".join(option(question, i) for i in range(len(question.options))))
    if revealed:
        result(question, None)
        counts = store.counts(code, question.id, len(question.options))
        fig = projected(class_answers(question.options, counts, question.answer))
        fig.update_layout(height=HISTOGRAM_HEIGHT)
        st.plotly_chart(fig, width="stretch", key="lec_histogram", config=FIGURE_CONFIG)
        return
    arriving(store, code, question)
    st.button("Reveal the answers", key="lec_reveal", type="primary", on_click=reveal)


@st.fragment(run_every=1.0)
def arriving(store: ClassStore, code: str, question: Question) -> None:
    """How many have answered, refreshed every second (or, while the store does not answer,
    a line that says so: the next second tries again)."""
    try:
        answered = sum(store.counts(code, question.id, len(question.options)))
        roster = store.roster(code)
    except ClassError:
        st.caption("The class store is not answering; the count comes back when it does.")
        return
    with st.container(key="lec_answer_count"):
        counts = f"**{answered}** answered · {roster.active} of {roster.joined} joined here now"
        st.markdown(counts)  # fixed words: numbers
