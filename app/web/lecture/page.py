"""Lecture: §3 of the paper (or any deck) slide by slide on live models, alone or with a class.

?page=lecture&deck=NAME&slide=N opens a slide; ?class=CODE joins a class as a student, or opens
it as its teacher in a browser that holds the class's key (teacher_key.py: never in the address).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from attnlens.app.classroom.limits import ClassError, NotIssuedError
from attnlens.app.classroom.names import normal_code
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import store_url
from attnlens.app.teaching.deck import Deck, Library, Slide
from attnlens.app.teaching.questions import Question
from attnlens.app.teaching.slides import Built
from attnlens.app.teaching.view import View, input_text, model_name
from attnlens.app.web import urlstate
from attnlens.app.web.lecture import ask, place, screen, teacher_key
from attnlens.app.web.lecture import class_panel as panel
from attnlens.app.web.lecture.controls import adjust
from attnlens.app.web.lecture.resources import (
    built_slide,
    follow_signal,
    library,
    prefetch_slide,
    this_store,
    version_board,
)
from attnlens.app.web.lecture.screen import Place
from attnlens.app.web.lecture.slide_payload import explore_link, explore_params
from attnlens.app.web.resources import load_lens
from attnlens.app.web.safe_text import md
from attnlens.app.web.screen_size import screen_size


def page() -> None:
    if teacher_key.address_free():
        urlstate.remember("page", "lecture")
    screen_size()  # a phone's screen, said once: the slide's figure reflowed for it
    screen.projector_css()
    decks = library()
    if not decks.decks:
        st.error("No deck could be read.")
        _deck_errors(decks)
        return
    code = normal_code(st.query_params.get("class", ""))
    if st.query_params.get("class") and not code:
        st.error(md(f"{st.query_params.get('class')!r} is not a join code (6 letters and digits)."))
        return
    panel.store_error()
    claimed = bool(code) and teacher_key.claims(code)
    try:
        store = this_store() if code else None
        teaching = store is None or teacher_key.credential(store, code) is not None
    except ClassError as err:  # the store cannot be reached: a page that says it teaches does
        panel.again_when_back(err, this_store)
        if not claimed:
            st.error(md(err.for_students))
            return
        teaching, store = True, None
        st.error(md(err))
    if store is not None and not teaching:
        try:
            if claimed and store.state(code) is None:
                _teachers_class_gone(store, code)
            else:
                student_page(decks, store, code)
        except ClassError as err:  # the store not answering, the class full, a made-up id, …
            st.error(md(err.for_students))
            panel.again_when_back(err, this_store)
            if isinstance(err, NotIssuedError):
                st.button("Join as a new student", key="lec_join_new", on_click=panel.forget_me)
        return
    try:
        lecturer_page(decks, store, code or None)
    except ClassError as err:  # the store cannot be reached, the class has ended, …
        st.error(md(err))
        st.button("Go on without the class", key="lec_leave", on_click=panel.end_class)
        panel.again_when_back(err, this_store)


def _teachers_class_gone(store: ClassStore, code: str) -> None:
    """A teacher's page (it holds a key or a pass) on a class the store no longer holds: words
    for the teacher, not the students' "check it with your teacher"."""
    st.error(md(f"No class has the code {code} any more: it expired (a week after its teacher "
                "last moved it), or its store lost it and this server holds no copy. Start a "
                "new class from the lecture."))  # fmt: skip
    panel.store_notices(store)
    st.button("Go on without the class", key="lec_leave", on_click=panel.end_class)


def _deck_errors(decks: Library) -> None:
    """Each file that could not be read, by name only: why (with its path) is for whoever
    started the server, who sees it on the terminal; never a visitor (docs/teaching.md)."""
    if decks.unopened:
        with st.expander(f"{len(decks.unopened)} deck file(s) cannot be opened"):
            for message in decks.unopened.values():
                st.text(message)  # a file name and fixed words
            st.caption("`attnlens serve` names each one and why on its terminal as it starts.")


def slide_at(
    decks: Library, here: Place, projector: bool = True
) -> tuple[Deck, Slide, Built, str, str] | None:
    """The deck and slide at `here`, built on its model and input (shared by every session),
    with that model's name and the input; None with a message when the model cannot load.
    `projector`: its figures' text at the projector's size, else a student's screen's."""
    deck = decks.decks[here.deck]
    slide = deck.slides[here.slide]
    model = model_name(deck, slide, here.view)
    lens = load_lens(model)
    if lens is None:
        return None
    text = input_text(deck, slide, here.view, lens.example)
    with st.spinner("Running the model…"):
        built = built_slide(deck.name, slide.number, here.view, model, text, projector)
    _prefetch_next(deck, here, model, text)
    return deck, slide, built, model, text


def _prefetch_next(deck: Deck, here: Place, model: str, text: str) -> None:
    """Build the next slide in the background when it runs on the same model and input."""
    ahead = here.moved(deck, 1)
    if ahead.slide == here.slide:
        return
    slide = deck.slides[ahead.slide]
    if model_name(deck, slide, ahead.view) == model:
        ahead_text = input_text(deck, slide, ahead.view, "")
        if ahead_text in ("", text):
            prefetch_slide(deck.name, slide.number, ahead.view, model, text)


def lecturer_page(decks: Library, store: ClassStore | None, code: str | None) -> None:
    """The lecture on its own, or the teacher of class `code` (this page holds its key)."""
    if store is not None and code:
        _at_the_class(decks, store, code)
        teacher_key.notices(code)
    here = place.current(decks)
    if teacher_key.address_free():
        place.to_url(here)
    made = slide_at(decks, here)
    if made is None:
        return
    deck, slide, built, model, text = made
    question = built.question if isinstance(built.question, Question) else None
    state = _sync(store, code, here, question) if store is not None and code else None
    if state is not None and question is not None:
        revealed = state.revealed == question.id
    else:
        revealed = ask.locally_revealed(built.question)
    screen.header(deck, slide, f" · {model}")
    if store is not None and code and state is not None:
        panel.class_bar(code, store, state)
    in_class = store is not None and code is not None and state is not None
    words = screen.body(slide, built, revealed, words=not (in_class and revealed))
    with words:
        if store is not None and code and state is not None:
            ask.teacher(built.question, store, code, revealed,
                        lambda: _reveal(store, code, question))  # fmt: skip
        else:
            ask.local(built.question)
    screen.navigation(here, deck, built, place.go)
    _tools(here, deck, built, model, text, store, code)
    _deck_errors(decks)
    if code:
        teacher_key.keeping(code)


def _at_the_class(decks: Library, store: ClassStore, code: str) -> None:
    """A teacher's first page on a class with no slide in its address (another device the
    class was handed to): it opens where the class is, rather than moving it to slide 1."""
    if place.SESSION in st.session_state or "slide" in st.query_params:
        return
    state = store.state(code)
    if state is not None and state.deck in decks.decks:
        st.session_state[place.SESSION] = Place(state.deck, state.slide,
                                                View.from_dict(state.view))  # fmt: skip


def _tools(here: Place, deck: Deck, built: Built, model: str, text: str,
           store: ClassStore | None, code: str | None) -> None:  # fmt: skip
    """The slide's settings, and the class: out of the way, at the bottom."""
    cols = st.columns([2, 2, 1, 1])
    with cols[0]:
        adjust(here, model, text, built, place.go)
    if code is None:
        cols[1].button("Start a class", key="lec_start", width="stretch", on_click=_start,
                       args=(here,))  # fmt: skip
    else:
        cols[1].button("Leave the class (it keeps its last slide)", key="lec_end",
                       width="stretch", on_click=panel.end_class)  # fmt: skip
    cols[2].link_button(
        "Explore this", explore_link(model, text, built), width="stretch",
        help="This slide on Explore in a new tab; the lecture stays in this one",
    )  # fmt: skip
    leave = cols[3].button(
        "Leave the lecture", key="lec_leave", width="stretch",
        help="Explore this slide in this tab, with the sidebar and every page",
    )  # fmt: skip
    if leave:  # the sidebar, hidden for the projector, is back on every other page
        _leave(explore_params(model, text, built))


EXPLORE = Path(__file__).parents[1] / "explore" / "page.py"
# the controls of the other pages the lecture's model, input, kind, layer and head set
OTHER_PAGES_CONTROLS = ("w_model_choice", "w_model_path", "w_text", "w_kind", "w_layer", "w_head")


def _leave(params: dict[str, str]) -> None:
    """Explore in this tab on what the slide showed: the session's values are what the other
    pages read (the URL only seeds a new session), so they are set, and the controls that
    held older ones let go."""
    for key in OTHER_PAGES_CONTROLS:
        st.session_state.pop(key, None)
    urlstate.forget("model_choice")  # the sidebar's picker follows the model
    for name, value in params.items():
        urlstate.remember(name, value)
    st.switch_page(EXPLORE, query_params=params)


@panel.reported
def _start(here: Place) -> None:
    panel.start_class(this_store(), ClassState(here.deck, here.slide, here.view.to_dict()))


def _sync(store: ClassStore, code: str, here: Place, question: Question | None) -> ClassState:
    """Put the teacher's slide, view and question in the store when they changed; a question
    stays revealed only while it is the one on screen."""
    state = store.state(code)
    if state is None:
        raise ClassError("this class is no longer in the store; start a new one")
    qid = question.id if question is not None else None
    wanted = state.moved(
        deck=here.deck,
        slide=here.slide,
        view=here.view.to_dict(),
        question=question.to_dict() if question is not None else None,
        question_id=qid,
        revealed=state.revealed if state.revealed == qid else None,
    )
    if _differs(state, wanted):
        state = store.update(code, teacher_key.held(code), wanted)
    return state


def _differs(a: ClassState, b: ClassState) -> bool:
    fields = ("deck", "slide", "view", "question_id", "revealed")
    return any(getattr(a, f) != getattr(b, f) for f in fields)


@panel.reported
def _reveal(store: ClassStore, code: str, question: Question | None) -> None:
    state = store.state(code)
    if state is not None and question is not None:
        store.update(code, teacher_key.held(code), state.moved(revealed=question.id))


FOLLOWED = "_lec_followed"  # session key: this student's last run followed the teacher


def student_page(decks: Library, store: ClassStore, code: str) -> None:
    """A student's screen: following, the teacher's slide drawn in the browser from the slide
    the server built once for the class (no rerun of this page when the teacher moves); or,
    stepped away, their own walk through the deck until they rejoin."""
    state = store.state(code)
    if state is None:
        st.error(md(f"No class has the code {code}: check it with your teacher."))
        return
    me = panel.joined(store, code)
    if state.deck not in decks.decks:
        st.error(md(f"The teacher's deck {state.deck!r} is not on this server."))
        return
    if st.toggle("Follow the teacher", value=True, key="lec_follow"):
        st.session_state[FOLLOWED] = True
        url = store_url()
        present = urlstate.flag(st.query_params.get("present", ""))
        panel.follow(code, state.version, me.id, version_board(url), follow_signal(url),
                     nickname=me.nickname, present=present)  # fmt: skip
        return
    last = len(decks.decks[state.deck].slides) - 1
    teacher_place = Place(state.deck, min(state.slide, last), View.from_dict(state.view))
    if st.session_state.pop(FOLLOWED, False):  # just stepped away: from the teacher's slide
        st.session_state[place.SESSION] = teacher_place
    here = place.current(decks)
    made = slide_at(decks, here, projector=urlstate.flag(st.query_params.get("present", "")))
    if made is None:
        return
    deck, slide, built, model, text = made
    screen.header(deck, slide, f" · {model} · class {code} · you are {me.nickname}")
    with screen.body(slide, built):
        ask.local(built.question)
    st.caption("You have stepped away: move on your own, and switch Follow back on to rejoin.")
    screen.navigation(here, deck, built, place.go, prefix="stu")
    st.link_button("Explore this on your own", explore_link(model, text, built))


page()
