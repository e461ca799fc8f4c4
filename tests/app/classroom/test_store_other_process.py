"""A SQLite class store read by another process while a server writes to it (the test process of
test_browser_class.py, the sqlite3 shell, a backup, a second replica): the server's later writes
must still reach the file.

Found chasing the tab-after-tab class test (the server counted three students while the file
held none): SQLiteStore checked which file it writes to by opening and closing the path
(sqlite_file.identity; it now keeps one handle open for that), and closing any descriptor of a
file drops every POSIX lock the process holds on it, SQLite's among them. Another process's
connection then believes it is the last one when it closes, checkpoints and deletes the write-
ahead log, and the server went on writing into a log no one else could see: its answers are in
no file (SQLite's "How To Corrupt An SQLite Database File", 2.2.1).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from attnlens.app.classroom.sqlite_file import ADDED, SCHEMA
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.stores import open_store

# another process opens the file, reads it as any reader does, and closes it
READ = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(db.execute(sys.argv[2])" \
    ".fetchone()[0]); db.close()"  # fmt: skip


def read_elsewhere(path: Path, query: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", READ, str(path), query], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_students_who_join_after_another_process_read_the_store_are_in_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "classes.sqlite3"
    store = open_store(f"sqlite:///{path}")  # the server's
    made = store.create(ClassState("section3", 0))
    store.join(made.code)
    count = f"SELECT COUNT(*) FROM students WHERE code = '{made.code}'"
    assert read_elsewhere(path, count) == 1
    store.join(made.code)
    store.join(made.code)
    assert store.roster(made.code).joined == 3  # what the server counts
    assert read_elsewhere(path, count) == 3  # what the file holds
    store.close()


def test_a_store_read_by_no_other_process_holds_every_join(tmp_path: Path) -> None:
    """The same joins with no reader in between reach the file (the check above is fair)."""
    path = tmp_path / "classes.sqlite3"
    store = open_store(f"sqlite:///{path}")
    made = store.create(ClassState("section3", 0))
    for _ in range(3):
        store.join(made.code)
    assert read_elsewhere(path, f"SELECT COUNT(*) FROM students WHERE code = '{made.code}'") == 3
    store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM classes").fetchone()[0] == 1


def test_a_store_opened_while_another_adds_its_columns_opens(tmp_path: Path) -> None:
    """A file of the first schema, gaining its later columns from another connection while a
    store opens it: the store reads which columns there are inside its own write transaction,
    so it waits and finds them added. Reading them first, it saw them missing and its ALTER
    failed ("duplicate column name", two processes opening a new file at once)."""
    path = tmp_path / "classes.sqlite3"
    first = sqlite3.connect(path, isolation_level=None)
    first.execute("PRAGMA journal_mode=WAL")
    first.executescript(SCHEMA)  # the columns of the first files only
    first.execute("BEGIN IMMEDIATE")
    failed: list[BaseException] = []

    def open_it() -> None:
        try:
            open_store(f"sqlite:///{path}").close()
        except BaseException as err:  # reported below
            failed.append(err)

    opening = threading.Thread(target=open_it)
    opening.start()
    time.sleep(2)  # the store is at its columns by now
    for column, kind in ADDED.items():
        first.execute(f"ALTER TABLE students ADD COLUMN {column} {kind}")
    first.execute("COMMIT")
    opening.join(60)
    assert not failed, failed


def test_two_stores_of_one_process_on_one_file_keep_every_join_after_an_outside_read(
    tmp_path: Path,
) -> None:
    """Issue 45's first finding: the pages' store and the follow route's board each opened the
    file; the second one's opening closed a descriptor of it and dropped the first's locks, so
    another process's read checkpointed and deleted the log the server still wrote to. 5 joins
    acknowledged, 0 in the file for a fresh process."""
    path = tmp_path / "classes.sqlite3"
    url = f"sqlite:///{path}"
    pages = open_store(url)
    made = pages.create(ClassState("section3", 0))
    board = open_store(url)  # the board's, opened later in the same process
    count = f"SELECT COUNT(*) FROM students WHERE code = '{made.code}'"
    assert read_elsewhere(path, count) == 0  # an outside read (a shell, a backup, a test)
    for _ in range(5):
        pages.join(made.code)
    assert board.roster(made.code).joined == 5  # what the server counts
    assert read_elsewhere(path, count) == 5  # what a fresh process finds in the file


def test_a_log_deleted_under_the_server_is_noticed_and_every_later_join_reaches_the_file(
    tmp_path: Path,
) -> None:
    """The file's identity covers its write-ahead log and the log's index: a log deleted under
    the store (here as the bug above did it: a descriptor of the file opened and closed in the
    server's process, then another process's read) is noticed at the next call, and what the
    server writes from then on reaches the file. Checking the main file only, nothing noticed:
    0 of the 5 joins were in the file."""
    path = tmp_path / "classes.sqlite3"
    store = open_store(f"sqlite:///{path}")
    made = store.create(ClassState("section3", 0))
    os.close(os.open(path, os.O_RDONLY))  # every POSIX lock of this process on the file dropped
    count = f"SELECT COUNT(*) FROM students WHERE code = '{made.code}'"
    assert read_elsewhere(path, count) == 0  # the last user, it thought: log checkpointed, deleted
    assert not path.with_name(path.name + "-wal").exists()
    for _ in range(5):
        store.join(made.code)
    assert read_elsewhere(path, count) == 5
    (notice,) = store.notices()
    assert "write-ahead log" in notice and "nothing it had acknowledged is lost" in notice
    store.close()


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 shell is not installed")
def test_a_backup_taken_as_deploying_says_holds_the_class_and_every_later_join_reaches_the_file(
    tmp_path: Path,
) -> None:
    """docs/deploying.md's backup of a class database while its server runs, word for word."""
    path, backup = tmp_path / "classes.sqlite3", tmp_path / "backup.sqlite3"
    store = open_store(f"sqlite:///{path}")
    made = store.create(ClassState("section3", 0))
    for _ in range(3):
        store.join(made.code)
    done = subprocess.run(["sqlite3", str(path), f".backup {backup}"], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    count = f"SELECT COUNT(*) FROM students WHERE code = '{made.code}'"
    assert read_elsewhere(backup, count) == 3
    store.join(made.code)
    store.join(made.code)
    assert read_elsewhere(path, count) == 5
    store.close()


def test_the_pages_the_routes_and_the_board_of_a_process_share_one_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What app/web/served.py hands its routes: the pages' store (the answer route's too) and the
    board's (the follow and slide routes') are one object, whatever spelling of the file."""
    from attnlens.app.classroom.board import shared_board
    from attnlens.app.web.lecture.resources import this_store

    path = tmp_path / "classes.sqlite3"
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", f"sqlite:///{path}")
    board = shared_board(f"sqlite:///{path}")
    try:
        assert this_store() is board.store is open_store(str(tmp_path / "." / "classes.sqlite3"))
    finally:
        board.close()
        board.store.close()
    assert open_store(f"sqlite:///{path}") is not board.store  # closed: opened anew
    open_store(f"sqlite:///{path}").close()
