"""A class store that stops answering for a moment (Redis restarting, SQLite busy or gone): the
parts of a class page that run on their own every few seconds show no error box (a student's
answer on a store that is away: tests/app/classroom/test_answer_route.py)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.stores import open_store


def fragments_on_a_store_that_is_away(path: str, folder: str, code: str) -> None:
    """The teacher's count of answers, on a store that is closed (a student's heartbeat is the
    follow route's now: tests/app/classroom/test_follow_route.py)."""
    from pathlib import Path

    from attnlens.app.classroom.sqlite_store import SQLiteStore
    from attnlens.app.teaching.questions import Question
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
