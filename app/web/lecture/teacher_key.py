"""What makes a page the teacher's, kept out of the address (issue 49): the session holds it,
and the browser keeps a pass in a cookie only the server reads (app/classroom/teach_route.py),
so a reload, a new tab or a server restart still teaches, while the address (projected, copied,
in the history) carries only the class's code. Another device takes the class over with a
one-time code from the teacher's page. An old link with `key=` is read once: the session keeps
the key, the browser its pass, and the address loses it (its history entry replaced), with a
line that says so.
"""

from __future__ import annotations

import time

import streamlit as st

from attnlens.app.classroom.limits import ClassError
from attnlens.app.classroom.route_parts import prefix
from attnlens.app.classroom.state import Created, HandOver
from attnlens.app.classroom.store import ONCE_SECONDS, ClassStore
from attnlens.app.classroom.teach_route import TEACH_PATH, cookie_name
from attnlens.app.web.components import component
from attnlens.app.web.safe_text import md

HELD = "_lec_teacher"  # session: class code -> what this session moves it with (key or pass)
KEEPING = "_lec_keeping"  # session: class code -> the one-time code its cookie is being set with
MOVED = "_lec_key_moved"  # session: the class whose key this session took out of the address
UNKEPT = "_lec_key_unkept"  # session: the class whose pass this browser could not keep
HANDED = "_lec_handed"  # session: class code -> the one-time code shown for another device
HAND_ERROR = "_lec_hand_error"
KEEP_KEY = "lec_keep_key"  # the keeping component's key; its trigger "kept": {code, ok}
STATUS_EVERY_SECONDS = 2.0

_mount = component("attnlens_keep_key", "keep_key", '<div class="kk-root"></div>')


def claims(code: str) -> bool:
    """Whether this page says it is the class's teacher (its session, its browser's cookie or
    an old link's key), before the store has checked it: the words it gets when the store
    cannot answer, or no longer has the class."""
    return bool(held(code) or _cookie(code) or st.query_params.get("key"))


def credential(store: ClassStore, code: str) -> str | None:
    """What this page moves class `code` with, when it is the teacher's: the session's, its
    browser's pass, or an old link's key (kept then, and taken out of the address)."""
    url = st.query_params.get("key")
    for given in (held(code), _cookie(code), url):
        if given and store.is_teacher(code, given):
            if given == url and held(code) != url:  # an old link: keep it, off the address
                _keep(store, code, given)
                st.session_state[MOVED] = code
            st.session_state.setdefault(HELD, {})[code] = given
            return given
    return None


def held(code: str) -> str | None:
    """What this session moves class `code` with (None: it is not its teacher)."""
    return st.session_state.get(HELD, {}).get(code)  # type: ignore[no-any-return]


def started(store: ClassStore, made: Created) -> None:
    """A class this session just created: it teaches it, and its browser keeps a pass."""
    st.session_state.setdefault(HELD, {})[made.code] = made.key
    _keep(store, made.code, made.key)


def forget(code: str | None) -> None:
    """This session no longer teaches the class (its browser's cookie stays)."""
    for name in (HELD, KEEPING, HANDED):
        st.session_state.get(name, {}).pop(code, None)


def _cookie(code: str) -> str | None:
    found = st.context.cookies.get(cookie_name(code))
    return found if isinstance(found, str) and found else None


def _keep(store: ClassStore, code: str, key: str) -> None:
    """Have the browser keep a pass for the class (keeping() sends it a one-time code)."""
    st.session_state.setdefault(KEEPING, {})[code] = store.hand_over(code, key).once


def keeping(code: str) -> None:
    """The component that takes `key=` out of the address, replacing its history entry (no
    entry with the key is left behind), and sends the teach route this session's one-time code
    for the browser's cookie; draws nothing. Streamlit pushes a new entry when the script
    changes the address, so the key leaves the script's copy only after the browser's
    (`_kept`), and the page writes nothing into the address meanwhile (address_free)."""
    once = st.session_state.get(KEEPING, {}).get(code)
    if once is None:
        return
    path = f"{prefix(st.get_option('server.baseUrlPath'))}/{TEACH_PATH}"
    _mount(key=KEEP_KEY, data={"path": path, "code": code, "once": once},
           on_kept_change=_kept)  # fmt: skip


def address_free() -> bool:
    """Whether the page may write into the address: not while it still shows an old key."""
    return "key" not in st.query_params


def _kept() -> None:
    state = st.session_state.get(KEEP_KEY)
    said = state.get("kept") if isinstance(state, dict) else None
    if not isinstance(said, dict) or not isinstance(said.get("code"), str):
        return
    st.session_state.get(KEEPING, {}).pop(said["code"], None)
    if "key" in st.query_params:  # the browser's address has lost it already: no entry pushed
        del st.query_params["key"]
    if said.get("ok") is not True:
        st.session_state[UNKEPT] = said["code"]


def notices(code: str) -> None:
    """What became of an old link's key, or a browser that could not keep the pass."""
    if st.session_state.get(MOVED) == code:
        st.info(
            "This page's address carried the class's teacher key (`key=…`): anyone who saw it, "
            "on the projector or in a copied link, could move the class. This browser now keeps "
            "it where no address shows it (a cookie only this server reads), and the address "
            "holds only the class's code. The old link still moves the class: if it was shown "
            "or shared, start a new class."
        )
        st.button("Understood", key="lec_key_moved_seen", on_click=_seen, args=(MOVED,))
    if st.session_state.get(UNKEPT) == code:
        st.warning(
            "This browser did not keep the class for a reload (its cookie was refused): this tab "
            "moves the class until it is closed. To teach from another tab or device, use "
            "Class → Control this class from another device."
        )


def _seen(name: str) -> None:
    st.session_state.pop(name, None)


def hand_over_panel(store: ClassStore, code: str, link: str) -> None:
    """Control the class from another device: a one-time code, where to type it, and whether
    it was used (checked every few seconds)."""
    st.markdown("**Control this class from another device**")
    st.button("Show a one-time code", key="lec_hand_over", on_click=_hand_over,
              args=(store, code))  # fmt: skip
    error = st.session_state.pop(HAND_ERROR, None)
    if error:
        st.error(md(error))
    shown: HandOver | None = st.session_state.get(HANDED, {}).get(code)
    if shown is not None:
        _hand_over_status(store, code, shown, link)


def _hand_over(store: ClassStore, code: str) -> None:
    try:
        made = store.hand_over(code, held(code))
    except ClassError as err:
        st.session_state[HAND_ERROR] = str(err)
        return
    st.session_state.setdefault(HANDED, {})[code] = made


@st.fragment(run_every=STATUS_EVERY_SECONDS)
def _hand_over_status(store: ClassStore, code: str, shown: HandOver, link: str) -> None:
    try:
        used = store.handed_over(code)
    except ClassError:
        used = None
    with st.container(key="lec_hand_over_code"):
        if used is not None and used >= shown.expires - ONCE_SECONDS - 1:  # this code's use
            at = time.strftime("%H:%M:%S", time.localtime(used))
            st.success(md(f"Another device took control of the class at {at}."))
            return
        left = shown.expires - time.time()
        if left <= 0:
            st.caption("The code expired: show a new one.")
            return
        st.markdown(f"## {shown.once[:4]}-{shown.once[4:]}")  # fixed words: the server made it
        said = f"On the other device open **{md(link)}** and type it there. It works once, "
        st.markdown(said + f"for {int(left)} s more.")  # fixed words: the link is md() above
        st.caption("Keep it off the projector: whoever types it first teaches the class.")
