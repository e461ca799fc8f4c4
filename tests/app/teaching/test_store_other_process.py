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

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from attnlens.app.teaching.class_state import ClassState
from attnlens.app.teaching.class_store import open_store
from attnlens.app.teaching.sqlite_store import ADDED, SCHEMA

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
