"""The board: each followed class's version read once per process, and the requests waiting on
a class woken when it changes."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from attnlens.app.classroom.board import (
    FOLLOW_HTML,
    PLOTLY_JS,
    TICK_SECONDS,
    TooManyWaitingError,
    VersionBoard,
)
from attnlens.app.classroom.follow_page import PLOTLY_FILE
from attnlens.app.classroom.sqlite_store import SQLiteStore
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore


def move(store: ClassStore, code: str, key: str, slide: int) -> int:
    state = store.state(code)
    assert state is not None
    return store.update(code, key, state.moved(slide=slide)).version


def until(check: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(TICK_SECONDS / 2)


def test_the_board_reads_a_followed_class_version_and_keeps_it_current(
    store: ClassStore, tmp_path: Path
) -> None:
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    try:
        assert (tmp_path / "board" / "index.html").read_text() == FOLLOW_HTML
        board.watch("../../etc")  # not a code: nothing is read
        assert board.version("../../etc") is None
        board.watch(made.code.lower())
        assert board.version(made.code) == 0  # at once, before the first tick
        move(store, made.code, made.key, 1)
        until(lambda: board.version(made.code) == 1, 20 * TICK_SECONDS + 2)
        assert board.version(made.code) == 1
        assert sorted(p.name for p in board.folder.iterdir()) == ["index.html", PLOTLY_FILE]
        assert (board.folder / PLOTLY_FILE).read_bytes() == PLOTLY_JS.read_bytes()
    finally:
        board.close()


def test_a_request_is_answered_at_once_when_the_page_is_behind(
    store: ClassStore, tmp_path: Path
) -> None:
    made = store.create(ClassState("section3", 0))
    move(store, made.code, made.key, 1)
    board = VersionBoard(store, tmp_path / "board")
    try:
        started = time.monotonic()
        assert asyncio.run(board.wait(made.code, 0, timeout=30)) == 1
        assert time.monotonic() - started < 10  # not held: well under its 30 s
        assert board.waiting == 0
    finally:
        board.close()


def test_a_request_is_held_until_the_teacher_moves_then_every_waiter_wakes(
    store: ClassStore, tmp_path: Path
) -> None:
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")

    async def class_of_five() -> list[int | None]:
        waits = [asyncio.create_task(board.wait(made.code, 0, timeout=60)) for _ in range(5)]
        while board.waiting < 5:
            await asyncio.sleep(0.01)
        assert not any(w.done() for w in waits)  # held: nothing changed
        moved = await asyncio.to_thread(move, store, made.code, made.key, 1)
        assert moved == 1
        return list(await asyncio.gather(*waits))

    try:
        started = time.monotonic()
        assert asyncio.run(class_of_five()) == [1, 1, 1, 1, 1]
        assert time.monotonic() - started < 30  # woken by the move, not by the 60 s timeout
        assert board.waiting == 0
    finally:
        board.close()


def test_a_request_on_a_class_that_stays_put_comes_back_unchanged(
    store: ClassStore, tmp_path: Path
) -> None:
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    try:
        assert asyncio.run(board.wait(made.code, 0, timeout=0.5)) is None
        assert board.waiting == 0
    finally:
        board.close()


def test_a_code_that_names_no_class_is_answered_minus_one_and_not_kept_read(
    store: ClassStore, tmp_path: Path
) -> None:
    board = VersionBoard(store, tmp_path / "board")
    try:
        assert asyncio.run(board.wait("ABCDEF", 0, timeout=30)) == -1
        assert board.version("ABCDEF") is None  # a made-up code costs one read, nothing after
    finally:
        board.close()


def test_past_the_limit_a_request_is_refused_and_the_others_still_wake(
    store: ClassStore, tmp_path: Path
) -> None:
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board", max_waiters=3)

    async def one_too_many() -> list[int | None]:
        waits = [asyncio.create_task(board.wait(made.code, 0, timeout=60)) for _ in range(3)]
        while board.waiting < 3:
            await asyncio.sleep(0.01)
        with pytest.raises(TooManyWaitingError):
            await board.wait(made.code, 0, timeout=60)
        assert await board.wait(made.code, 7, timeout=60) == 0  # answered at once: no slot
        await asyncio.to_thread(move, store, made.code, made.key, 1)
        return list(await asyncio.gather(*waits))

    try:
        assert asyncio.run(one_too_many()) == [1, 1, 1]
        assert board.waiting == 0
    finally:
        board.close()


def test_a_class_nobody_asks_about_is_forgotten_and_one_still_waited_on_is_kept(
    store: ClassStore, tmp_path: Path
) -> None:
    left = store.create(ClassState("section3", 0)).code
    waited = store.create(ClassState("section3", 0)).code
    board = VersionBoard(store, tmp_path / "board", forget_seconds=0.5)

    async def hold() -> tuple[bool, int | None]:
        """While a request waits on `waited`: `left` forgotten, and `waited` still read once
        as long again past forget_seconds (asked about after the wait ends, a class may be
        forgotten at the board's next tick: the wait is what keeps it)."""
        held = asyncio.create_task(board.wait(waited, 0, timeout=120.0))
        deadline = time.monotonic() + 60
        while board.version(left) is not None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        forgotten = board.version(left) is None
        await asyncio.sleep(0.6)  # waited's ask is past forget_seconds now, twice over
        kept = board.version(waited)
        assert not held.done()
        held.cancel()
        return forgotten, kept

    try:
        board.watch(left)
        assert asyncio.run(hold()) == (True, 0)
    finally:
        board.close()


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
        until(lambda: board.version(made.code) == 1, 30 * TICK_SECONDS + 2)
        assert board.version(made.code) == 1
        assert "database is locked" in capfd.readouterr().err
    finally:
        board.close()
        store.close()


def test_a_page_and_the_board_reading_one_class_at_once_keep_the_newest(
    store: ClassStore, tmp_path: Path
) -> None:
    """A page's first watch reads the class in the page's thread while the board's own thread
    may read it too: the version kept is never an older one read later."""
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    failures: list[BaseException] = []

    def read_often() -> None:
        try:
            for _ in range(200):
                board._refresh(made.code)
        except BaseException as err:  # the reader thread ends; the test reports it
            failures.append(err)

    try:
        board.watch(made.code)  # the board's thread reads it too, every tick
        readers = [threading.Thread(target=read_often) for _ in range(4)]
        for reader in readers:
            reader.start()
        for slide in range(1, 60):  # each move a new version
            move(store, made.code, made.key, slide % 10)
        for reader in readers:
            reader.join()
        assert failures == []
        until(lambda: board.version(made.code) == 59, 20 * TICK_SECONDS + 2)
        assert board.version(made.code) == 59
    finally:
        board.close()
