"""A class store that stops answering for a moment (Redis restarting, SQLite busy or gone): the
parts of a class page that run on their own every few seconds show no error box."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from attnlens.app.teaching.class_limits import AWAY
from attnlens.app.teaching.class_state import ClassState
from attnlens.app.teaching.class_store import open_store
from attnlens.app.web.safe_text import md


def fragments_on_a_store_that_is_away(path: str, folder: str, code: str) -> None:
    """The teacher's count of answers, on a store that is closed (a student's heartbeat is the
    follow route's now: tests/app/teaching/test_follow_route.py)."""
    from pathlib import Path

    from attnlens.app.teaching.questions import Question
    from attnlens.app.teaching.sqlite_store import SQLiteStore
    from attnlens.app.web.lecture.ask import arriving

    store = SQLiteStore(Path(path))
    store.close()  # every call from now on fails, as on a store that does not answer
    arriving(store, code, Question("where", "?", ("a", "b"), 0, ""))


def test_the_count_of_answers_waits_for_the_store(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = open_store(f"sqlite:///{path}")
    code = store.create(ClassState("section3", 0)).code
    store.close()
    app = AppTest.from_function(
        fragments_on_a_store_that_is_away, args=(str(path), str(tmp_path / "board"), code)
    )
    app.run(timeout=30)
    assert not app.exception
    assert [c.value for c in app.caption] == [
        "The class store is not answering; the count comes back when it does."
    ]


def answering_on_a_store_that_is_away(path: str, code: str, me: str) -> None:
    """A student's answer button, on a store that is closed."""
    from pathlib import Path

    import streamlit as st

    from attnlens.app.teaching.sqlite_store import SQLiteStore
    from attnlens.app.web.lecture import ask
    from attnlens.app.web.lecture.class_panel import store_error

    store = SQLiteStore(Path(path))
    store.close()
    store_error()
    st.button("A", key="answer", on_click=ask._answer, args=(store, code, me, "q", 0))


def test_an_answer_the_store_cannot_take_says_so_once_on_the_page(tmp_path: Path) -> None:
    """A button's callback runs before the page, outside its handling of store errors: the
    error comes back as the page's message on the next run, once, not as an error box; in the
    students' words, without the store's address (it showed `class store sqlite:///…`)."""
    path = tmp_path / "c.sqlite3"
    store = open_store(f"sqlite:///{path}")
    code = store.create(ClassState("section3", 0)).code
    me = store.join(code).id
    store.close()
    app = AppTest.from_function(answering_on_a_store_that_is_away, args=(str(path), code, me))
    app.run(timeout=30)
    app.button(key="answer").click().run(timeout=30)
    assert not app.exception
    (shown,) = [e.value for e in app.error]  # as markdown, its characters escaped
    assert shown == md(AWAY) and "sqlite" not in shown and str(tmp_path) not in shown
    app.run(timeout=30)
    assert not app.exception and not app.error
