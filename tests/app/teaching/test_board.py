"""The board: each followed class's version in a file a student's browser can poll cheaply."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.teaching.board import TICK_SECONDS, VersionBoard
from attnlens.app.teaching.class_state import ClassState
from attnlens.app.teaching.class_store import open_store
from attnlens.app.teaching.sqlite_store import SQLiteStore


def read(folder: Path, code: str) -> int | None:
    path = folder / f"{code}.json"
    return json.loads(path.read_text())["version"] if path.exists() else None


def test_the_board_writes_a_followed_class_version_and_keeps_it_current(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    try:
        assert "setComponentValue" in (tmp_path / "board" / "index.html").read_text()
        board.watch("../../etc")  # not a code: nothing is written outside the folder
        board.watch(made.code.lower())
        assert read(board.folder, made.code) == 0  # at once, before the first tick
        state = store.state(made.code)
        assert state is not None
        store.update(made.code, made.key, state.moved(slide=2))
        deadline = time.monotonic() + 20 * TICK_SECONDS + 2
        while read(board.folder, made.code) != 1 and time.monotonic() < deadline:
            time.sleep(TICK_SECONDS / 2)
        assert read(board.folder, made.code) == 1
        assert sorted(p.name for p in board.folder.iterdir()) == [f"{made.code}.json", "index.html"]
    finally:
        board.close()
        store.close()


def test_a_class_that_is_gone_reads_minus_one(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    board = VersionBoard(store, tmp_path / "board")
    try:
        board.watch("ABCDEF")
        assert read(board.folder, "ABCDEF") == -1
    finally:
        board.close()
        store.close()


def test_a_class_nobody_asks_about_is_forgotten_and_one_still_open_is_kept(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    left = store.create(ClassState("section3", 0)).code
    open_ = store.create(ClassState("section3", 0)).code
    board = VersionBoard(store, tmp_path / "board", forget_seconds=0.5)
    try:
        board.watch(left)
        board.watch(open_)
        for _ in range(15):  # a page still open asks now and then
            time.sleep(0.1)
            board.watch(open_)
        assert read(board.folder, left) is None  # its file is gone: no longer read here
        assert read(board.folder, open_) == 0
    finally:
        board.close()
        store.close()


def student_still_here(store_url: str, folder: str, code: str) -> None:
    """A student's page that only runs the fragment telling the class it is still open."""
    from pathlib import Path

    from attnlens.app.teaching.board import VersionBoard
    from attnlens.app.teaching.class_store import open_store
    from attnlens.app.web.lecture.class_panel import still_here

    board = VersionBoard(open_store(store_url), Path(folder))
    still_here(open_store(store_url), code, "someone", board)
    board.close()


def test_an_open_student_page_keeps_its_class_read_on_the_board(tmp_path: Path) -> None:
    """The fragment a student's page runs every few seconds also tells the board, so a teacher
    who stays on one slide longer than the board remembers does not lose the class."""
    url = f"sqlite:///{tmp_path / 'c.sqlite3'}"
    store = open_store(url)
    code = store.create(ClassState("section3", 0)).code
    app = AppTest.from_function(student_still_here, args=(url, str(tmp_path / "board"), code))
    app.run(timeout=30)
    assert not app.exception
    assert read(tmp_path / "board", code) == 0
    store.close()


class LockedAtFirst(SQLiteStore):
    """A real SQLite store whose first reads fail as a busy database's do."""

    failures = 3

    def _state(self, code: str) -> ClassState | None:
        if self.failures:
            self.failures -= 1
            raise sqlite3.OperationalError("database is locked")
        return super()._state(code)


def test_the_board_outlives_a_store_that_fails_for_a_moment(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """One failed read must not end the board's thread: every class followed in the process
    would stop following."""
    store = LockedAtFirst(tmp_path / "c.sqlite3")
    store.failures = 0
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    try:
        board.watch(made.code)
        state = store.state(made.code)
        assert state is not None
        store.failures = 3
        store.update(made.code, made.key, state.moved(slide=1))
        deadline = time.monotonic() + 30 * TICK_SECONDS + 2
        while read(board.folder, made.code) != 1 and time.monotonic() < deadline:
            time.sleep(TICK_SECONDS / 2)
        assert read(board.folder, made.code) == 1
        assert "database is locked" in capfd.readouterr().err
    finally:
        board.close()
        store.close()


def test_a_page_and_the_board_writing_one_class_at_once_do_not_collide(tmp_path: Path) -> None:
    """A page's first watch writes the class's file in the page's thread while the board's
    own thread may be writing it too (make test saw the second rename find no file)."""
    store = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    failures: list[BaseException] = []

    def write_often() -> None:
        try:
            for _ in range(200):
                board._refresh(made.code)
        except BaseException as err:  # the writer thread ends; the test reports it
            failures.append(err)

    try:
        board.watch(made.code)  # the board's thread writes it too, every tick
        writers = [threading.Thread(target=write_often) for _ in range(4)]
        for writer in writers:
            writer.start()
        for slide in range(1, 60):  # each move a new version to write
            state = store.state(made.code)
            assert state is not None
            store.update(made.code, made.key, state.moved(slide=slide % 10))
        for writer in writers:
            writer.join()
        assert failures == []
        deadline = time.monotonic() + 20 * TICK_SECONDS + 2
        while read(board.folder, made.code) != 59 and time.monotonic() < deadline:
            time.sleep(TICK_SECONDS / 2)
        assert read(board.folder, made.code) == 59
    finally:
        board.close()
        store.close()
