"""A class on screen: the teacher's join code, link and QR code; the student's joining and
following (README, "Teaching with attnlens")."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from typing import Any, ParamSpec
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from attnlens.app.teaching.board import BROWSER_POLL_MS, VersionBoard
from attnlens.app.teaching.class_state import ClassState, Student
from attnlens.app.teaching.class_store import ClassError, ClassStore
from attnlens.app.teaching.names import valid_student_id
from attnlens.app.teaching.qr import qr_png
from attnlens.app.web.safe_text import md

P = ParamSpec("P")
PUBLIC_URL_ENV = "ATTNLENS_PUBLIC_URL"
SEEN_SECONDS = 10.0  # a student's page tells the store it is still open this often


def app_base() -> str:
    """The address students open: $ATTNLENS_PUBLIC_URL (behind a proxy), else the address
    the teacher's browser is on, without the page's own path."""
    public = os.environ.get(PUBLIC_URL_ENV, "").strip()
    if public:
        return public.rstrip("/")
    url = st.context.url or "http://localhost:8501"
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1] == "lecture":
        segments = segments[:-1]
    return urlunsplit((parts.scheme, parts.netloc, "/".join(["", *segments]), "", "")).rstrip("/")


def join_link(code: str) -> str:
    return f"{app_base()}/?class={code}"


def class_bar(code: str, store: ClassStore) -> None:
    """One line the room can read: the code and the link; the QR code a click away."""
    link = join_link(code)
    roster = store.roster(code)
    left, right = st.columns([5, 1], vertical_alignment="center")
    with left.container(key="lec_class_bar"):
        line = f"**Join: {md(link)}** · code **{code}** · {roster.joined} joined"
        st.markdown(line)  # fixed words: an escaped link, a code of letters and digits
    with right.popover("QR code", width="stretch"):
        st.image(qr_png(link), caption=md(link), width=420)


STORE_ERROR = "_lec_store_error"  # a button's class-store error, shown on the page's next run


def reported(callback: Callable[P, None]) -> Callable[P, None]:
    """A button's callback whose class-store error (the store not answering, the class full)
    the page shows as a message on its next run: a callback runs before the page, outside its
    own handling of those errors, and would show an error box."""

    @functools.wraps(callback)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            callback(*args, **kwargs)
        except ClassError as err:
            st.session_state[STORE_ERROR] = str(err)

    return run


def store_error() -> None:
    """The message of a button's class-store error, once."""
    message = st.session_state.pop(STORE_ERROR, None)
    if message:
        st.error(md(message))


def start_class(store: ClassStore, state: ClassState) -> None:
    """Create the class and put its code and the teacher's key in this page's address."""
    made = store.create(state)
    st.query_params["class"] = made.code
    st.query_params["key"] = made.key


def end_class() -> None:
    """Leave the class: the lecture goes on alone (students keep their last slide)."""
    for name in ("class", "key"):
        if name in st.query_params:
            del st.query_params[name]


def joined(store: ClassStore, code: str) -> Student:
    """This browser's student: the one its link names (a reload, a server restart), else a new
    one whose id goes into the link."""
    held: Student | None = st.session_state.get("_lec_student")
    if held is not None and st.session_state.get("_lec_student_class") == code:
        return held
    given = st.query_params.get("me")
    student = store.join(code, given if valid_student_id(given) else None)
    st.session_state["_lec_student"], st.session_state["_lec_student_class"] = student, code
    if st.query_params.get("me") != student.id:
        st.query_params["me"] = student.id
    return student


def follow(
    store: ClassStore,
    code: str,
    version: int,
    student: str,
    board: VersionBoard,
    signal: Callable[..., Any],
) -> None:
    """Rerun this page as soon as the class's version passes `version`: the board keeps the
    version in a file, the invisible component in the browser reads it (board.py says why)."""
    board.watch(code)
    signal(code=code, version=version, every_ms=BROWSER_POLL_MS, key="lec_follow_signal",
           default=None)  # fmt: skip
    still_here(store, code, student, board)


@st.fragment(run_every=SEEN_SECONDS)
def still_here(store: ClassStore, code: str, student: str, board: VersionBoard) -> None:
    """Tell the store now and then that this student's page is open (the teacher's count), and
    the board that the class is still followed here: a teacher may stay on one slide longer
    than the board remembers a class nobody asked about. A store that does not answer for a
    moment (Redis restarting, SQLite busy) is no reason to show the student an error: the page
    says so next time it runs whole, and this tries again in SEEN_SECONDS."""
    board.watch(code)
    with contextlib.suppress(ClassError):
        store.seen(code, student)
