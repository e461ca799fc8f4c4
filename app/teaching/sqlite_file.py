"""The file under a SQLite class store: which file it is, whether a file is a sound database, a
damaged one moved aside, and a class read whole from a connection (what a store can still read
of a file that was deleted under it)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from attnlens.app.teaching.class_state import ClassCopy, ClassState, Member

MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def read_class(db: sqlite3.Connection, code: str) -> ClassCopy | None:
    """The whole class as the file holds it."""
    row = db.execute(
        "SELECT teacher, state, version FROM classes WHERE code = ?", (code,)
    ).fetchone()
    if row is None:
        return None
    people = db.execute(
        "SELECT id, nickname, address, browser, joined, removed FROM students WHERE code = ?",
        (code,),
    ).fetchall()
    answers = db.execute(
        "SELECT question, student, choice, at FROM answers WHERE code = ?", (code,)
    ).fetchall()
    copy = ClassCopy(str(row[0]), ClassState.from_json(row[1], int(row[2])))
    for sid, name, address, browser, joined, removed in people:
        if removed:
            copy.removed.add(sid)
        else:
            copy.members[sid] = Member(sid, name, address, browser, joined)
    for question, student, choice, at in answers:
        copy.answers.setdefault(question, {})[student] = (int(choice), float(at))
    return copy


def identity(path: Path, held: int) -> tuple[int, int, bytes]:
    """The device and inode of the file at path, and the first 16 bytes (SQLite's magic) of the
    file held open as `held` (the same file while the first two match). Never opens and closes
    the path: closing any descriptor of a file drops every POSIX lock this process holds on it,
    SQLite's among them, and another process's connection, closing, would then checkpoint and
    delete the write-ahead log this one still writes to."""
    info = os.stat(path)
    return info.st_dev, info.st_ino, os.pread(held, len(MAGIC), 0)


Journal = tuple[tuple[int, int] | None, tuple[int, int] | None]


def journal(path: Path) -> Journal:
    """The device and inode of the file's write-ahead log (-wal) and its index (-shm), None for
    one that is not there: while a connection is open in WAL mode SQLite keeps both, so another
    pair is a log deleted under it (the connection would go on writing into a file no one else
    reads)."""
    found: list[tuple[int, int] | None] = []
    for suffix in ("-wal", "-shm"):
        try:
            info = os.stat(path.with_name(path.name + suffix))
        except FileNotFoundError:
            found.append(None)
        else:
            found.append((info.st_dev, info.st_ino))
    return found[0], found[1]


def unreadable(path: Path) -> str:
    """Why an existing file is not a usable SQLite database ("" when it is, or is absent).
    Read through SQLite only: it keeps a file's descriptors open while another connection of
    this process holds locks on it, where a plain open() and close() would drop them."""
    if not path.exists() or path.stat().st_size == 0:
        return ""
    try:
        db = sqlite3.connect(path, isolation_level=None)
        try:
            result = db.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
            return ""  # in use by another process: not damaged
        return str(err)
    return "" if result == "ok" else f"damaged: {result}"


def move_aside(path: Path, journal: bool = True) -> Path:
    """Rename the file (and its journal, when it is the file's own) to NAME.damaged-DATE-TIME
    beside it."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm") if journal else ():
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            os.replace(extra, aside.with_name(aside.name + suffix))
    return aside


def remove_file(path: Path) -> None:
    for extra in (path, path.with_name(path.name + "-journal")):
        extra.unlink(missing_ok=True)
