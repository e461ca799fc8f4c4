"""The board: each followed class's version in a file a student's browser can poll cheaply."""

from __future__ import annotations

import json
import time
from pathlib import Path

from attnlens.app.classroom.board import TICK_SECONDS, VersionBoard
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import open_store


def read(folder: Path, code: str) -> int | None:
    path = folder / f"{code}.json"
    return json.loads(path.read_text())["version"] if path.exists() else None


def test_the_board_writes_a_followed_class_version_and_keeps_it_current(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    made = store.create(ClassState("section3", 0))
    board = VersionBoard(store, tmp_path / "board")
    try:
        assert (tmp_path / "board" / "index.html").read_text().count("setComponentValue") == 1
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
