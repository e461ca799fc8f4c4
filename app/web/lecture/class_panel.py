"""A class on screen: the teacher's join code, link and QR code; the student's joining and
following (docs/teaching.md)."""

from __future__ import annotations

import functools
import os
import secrets
import time
from collections.abc import Callable
from typing import Any, ParamSpec

import streamlit as st

from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.join_link import PUBLIC_URL_ENV, JoinBase, join_base
from attnlens.app.classroom.limits import MAX_STUDENTS, ClassError, StoreUnavailableError
from attnlens.app.classroom.names import client_key
from attnlens.app.classroom.qr import qr_png
from attnlens.app.classroom.state import ClassState, Client, Student
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.teach_route import TEACH_PATH
from attnlens.app.web.lecture import teacher_key
from attnlens.app.web.safe_text import md

P = ParamSpec("P")
NOTICE_SECONDS = 24 * 3600  # the store's notices a teacher's page shows
NOTICE_EVERY_SECONDS = 5.0  # how often the teacher's page looks for new ones
BROWSER_COOKIE = "_streamlit_xsrf"  # Streamlit's own cookie: one random token per browser


def join_here() -> JoinBase:
    """Where students open this server: ATTNLENS_PUBLIC_URL, the address the teacher's browser
    reached it by, or this machine's network address; with a warning where none would work."""
    return join_base(
        st.context.url or "http://localhost:8501",
        st.get_option("server.address"),
        int(st.get_option("server.port")),
        os.environ.get(PUBLIC_URL_ENV),
    )


def join_link(code: str, base: JoinBase | None = None) -> str:
    return f"{(base or join_here()).url}/?class={code}"


def class_bar(code: str, store: ClassStore, state: ClassState) -> None:
    """What the room reads: first, when no student could open the link, why and the command
    that serves the class; the link (as text that copies whole: no Markdown, no invisible
    characters), the code, how many joined (and the most from one address: many means one
    network, or a script); the QR code, and the class's settings with a one-time code for
    another device, a click away on the left (opened, they cover the figure, never the
    question); what the store did on its own."""
    base = join_here()
    link = join_link(code, base)
    if base.warning:
        join_warning(base)
    roster = store.roster(code)
    qr, settings, shown, left = st.columns([1, 1, 4, 3], vertical_alignment="center")
    with shown.container(key="lec_join_link"):
        st.code(link, language=None, wrap_lines=True)
    with left.container(key="lec_class_bar"):
        line = f"← join · code **{code}** · {roster.joined} joined"
        if roster.from_one_address > 1:
            line += f" · {roster.from_one_address} from one address"
        if state.locked:
            line += " · joining locked"
        st.markdown(line)  # fixed words: a code of letters and digits, numbers
    unreachable = None if base.reachable else "No student could open this link"
    with qr.popover("QR code", width="stretch", disabled=unreachable is not None, help=unreachable):
        st.image(qr_png(link), width=420)
        with st.container(key="lec_qr_link"):
            st.code(link, language=None, wrap_lines=True)
    with settings.popover("Class", width="stretch"):  # another device first: it must be seen
        teacher_key.hand_over_panel(store, code, f"{base.url}/{TEACH_PATH}?class={code}")
        st.divider()
        class_settings(code, store, state)
    store_notices(store)


def join_warning(base: JoinBase) -> None:
    """Why no student can open the link, in its first sentence; the rest and the command that
    serves the room a click away (whole, on a 1080-line projector they pushed Previous and
    Next below the fold)."""
    first, _, rest = base.warning.partition(". ") if base.warning else ("", "", "")
    with st.container(key="lec_join_warning"):
        st.warning(md(first if first.endswith(".") or not rest else first + "."))
        if rest or base.command:
            with st.expander("How to let students join"):
                if rest:
                    st.markdown(md(rest))
                if base.command:
                    st.code(base.command, language=None)


def class_settings(code: str, store: ClassStore, state: ClassState) -> None:
    """The teacher's say over who is in the class: its size, joins from one address, a lock,
    and removing a student (their answers stop counting, their link stops joining)."""
    with st.form("lec_class_form", border=False):
        size = st.number_input("Students at most", 1, MAX_STUDENTS, state.size)
        per_address = st.number_input("Students from one network address at most", 1,
                                      MAX_STUDENTS, state.per_address)  # fmt: skip
        locked = st.toggle("Lock joining (those who joined can come back)", state.locked)
        if st.form_submit_button("Save"):
            _configure(store, code, int(size), int(per_address), bool(locked))
    members = {s.id: s.nickname for s in store.members(code)}
    chosen = st.selectbox("Remove a student", list(members), index=None, key="lec_remove_who",
                          format_func=lambda sid: members.get(sid, sid))  # fmt: skip
    st.button("Remove", key="lec_remove", disabled=chosen is None, on_click=_remove,
              args=(store, code, chosen))  # fmt: skip


@st.fragment(run_every=NOTICE_EVERY_SECONDS)
def store_notices(store: ClassStore) -> None:
    """What the store did on its own in the last day (a lost file written back, a damaged one
    moved aside), until the teacher has seen it; looked at every few seconds, as it happens
    while the teacher stays on one slide."""
    shown = st.session_state.get("_lec_notices_seen", 0.0)
    notices = store.notices(since=max(shown, time.time() - NOTICE_SECONDS))
    if not notices:
        return
    with st.container(key="lec_store_notices"):
        for text in notices:
            st.warning(md(text))
        st.button("Seen", key="lec_notices_seen", on_click=_seen_notices)


def _seen_notices() -> None:
    st.session_state["_lec_notices_seen"] = time.time()


STORE_ERROR = "_lec_store_error"  # a button's class-store error, shown on the page's next run


def reported(callback: Callable[P, None]) -> Callable[P, None]:
    """A teacher's button's callback whose class-store error (the store not answering, a
    setting out of range) the page shows as a message on its next run: a callback runs before
    the page, outside its own handling of those errors, and would show an error box."""

    @functools.wraps(callback)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            callback(*args, **kwargs)
        except ClassError as err:
            st.session_state[STORE_ERROR] = str(err)

    return run


def reported_to_students(callback: Callable[P, None]) -> Callable[P, None]:
    """As `reported`, for a student's button: the message is the one for students (never the
    store's address)."""

    @functools.wraps(callback)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            callback(*args, **kwargs)
        except ClassError as err:
            st.session_state[STORE_ERROR] = err.for_students

    return run


def store_error() -> None:
    """The message of a button's class-store error, once."""
    message = st.session_state.pop(STORE_ERROR, None)
    if message:
        st.error(md(message))


AGAIN_SECONDS = 3.0  # while the store is away, a page asks it this often whether it is back
AWAY_SINCE = "_lec_away_since"


def again_when_back(err: ClassError, store: Callable[[], ClassStore]) -> None:
    """After a page could not reach the store: redraw it whole once the store answers again, so
    a student's page does not stay on its message (it had nothing else left to rerun it)."""
    if isinstance(err, StoreUnavailableError):
        st.session_state[AWAY_SINCE] = time.monotonic()
        _ask_again(store)


@st.fragment(run_every=AGAIN_SECONDS)
def _ask_again(store: Callable[[], ClassStore]) -> None:
    if time.monotonic() - st.session_state.get(AWAY_SINCE, 0.0) < AGAIN_SECONDS / 2:
        return  # drawn with the page that just failed: the first question comes later
    try:
        store().ping()
    except ClassError:
        return
    st.rerun(scope="app")


def start_class(store: ClassStore, state: ClassState) -> None:
    """Create the class, put its code in this page's address and its key in this session (and
    the browser's cookie: teacher_key.py), never in the address."""
    made = store.create(state)
    st.query_params["class"] = made.code
    teacher_key.started(store, made)


def end_class() -> None:
    """Leave the class: the lecture goes on alone (students keep their last slide)."""
    teacher_key.forget(st.query_params.get("class"))
    for name in ("class", "key"):
        if name in st.query_params:
            del st.query_params[name]


@reported
def _configure(store: ClassStore, code: str, size: int, per_address: int, locked: bool) -> None:
    store.configure(code, teacher_key.held(code), size, per_address, locked)


@reported
def _remove(store: ClassStore, code: str, student: str | None) -> None:
    if student is not None:
        store.remove(code, teacher_key.held(code), student)
    st.session_state.pop("lec_remove_who", None)


def joined(store: ClassStore, code: str) -> Student:
    """This browser's student: the one its link names if the server gave that id out for this
    class (a reload, a server restart), else a new one whose id goes into the link. Asked of
    the store on every run: a student the teacher removed is told so at once."""
    held: Student | None = st.session_state.get("_lec_student")
    if held is not None and st.session_state.get("_lec_student_class") == code:
        given: str | None = held.id
    else:
        given = st.query_params.get("me")
    student = store.join(code, given, this_client())
    st.session_state["_lec_student"], st.session_state["_lec_student_class"] = student, code
    if st.query_params.get("me") != student.id:
        st.query_params["me"] = student.id
    return student


def forget_me() -> None:
    """Drop the link's student id (one this class never gave out): the page joins anew."""
    if "me" in st.query_params:
        del st.query_params["me"]
    st.session_state.pop("_lec_student", None)


def this_client() -> Client:
    """The address this page came from, and that address with the browser's own token (the
    cookie Streamlit gives each browser), as the store counts joins. A page without the cookie
    is no browser's (a script's websocket): all such pages of one address count as one browser.
    A server with Streamlit's XSRF protection off gives browsers no cookie: then each page
    counts as a browser of its own, and only the limit per address holds."""
    ip, cookie = st.context.ip_address, st.context.cookies.get(BROWSER_COOKIE)
    address = ip if isinstance(ip, str) and ip else "local"  # None on localhost
    if st.get_option("server.enableXsrfProtection"):
        token = browser_token(cookie if isinstance(cookie, str) else None)
    else:
        token = secrets.token_hex(8)
    return Client(client_key(address), client_key(address, token))


def browser_token(cookie: str | None) -> str:
    """The random token in Streamlit's XSRF cookie ("2|mask|masked token|time", the mask new
    on every page load): the same browser gives the same token."""
    parts = (cookie or "").split("|")
    if len(parts) != 4 or parts[0] != "2":
        return cookie or ""
    try:
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return cookie or ""
    if not mask:
        return cookie or ""
    return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)).hex()


def follow(
    code: str,
    version: int,
    student: str,
    board: VersionBoard,
    signal: Callable[..., Any],
    **shown: object,
) -> None:
    """The class's slide, drawn by the component in the browser (follow_page.py) from the
    version on: it waits on the follow route, which the board answers (board.py says why), and
    fetches each new slide, built once for the class; `shown`: more for it to draw (the
    student's nickname, the presentation size). Its request also tells the store, every
    SEEN_SECONDS, that this student's page is open (the teacher's count)."""
    board.watch(code)
    signal(code=code, version=version, student=student, key="lec_follow_signal", default=None,
           **shown)  # fmt: skip
