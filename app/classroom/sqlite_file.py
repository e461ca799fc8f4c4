"""The file under a SQLite class store: its tables and how a connection to it is opened, which
file it is (and its log), whether a file is a sound database, a damaged one moved aside, a class
read whole from a connection (what a store can still read of a file deleted under it) and a
class written back into one."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from attnlens.app.classroom.state import ClassCopy, ClassState, Member

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, teacher TEXT NOT NULL, created REAL NOT NULL,
    state TEXT NOT NULL, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL, id TEXT NOT NULL, nickname TEXT NOT NULL, joined REAL NOT NULL,
    seen REAL NOT NULL, PRIMARY KEY (code, id));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL, choice INTEGER NOT NULL,
    at REAL NOT NULL, PRIMARY KEY (code, question, student));
CREATE TABLE IF NOT EXISTS notices (at REAL NOT NULL, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS handovers (
    code TEXT PRIMARY KEY, digest TEXT NOT NULL, expires REAL NOT NULL,
    wrong INTEGER NOT NULL, used REAL);
"""
# columns added since the first files were written (a file of then opens and gains them)
ADDED = {
    "address": "TEXT NOT NULL DEFAULT ''",
    "browser": "TEXT NOT NULL DEFAULT ''",
    "removed": "INTEGER NOT NULL DEFAULT 0",
}
MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def connect(path: Path, busy_seconds: float) -> sqlite3.Connection:
    """A connection to the class store's file, its tables made and its later columns added: a
    commit is on disk before it is acknowledged (WAL, synchronous=FULL)."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=busy_seconds)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(SCHEMA)
    # the columns read and added in one write transaction: two processes opening a new file at
    # once would otherwise both see a column missing, and the second's ALTER would fail
    db.execute("BEGIN IMMEDIATE")
    try:
        have = {row[1] for row in db.execute("PRAGMA table_info(students)")}
        for column, kind in ADDED.items():
            if column not in have:
                db.execute(f"ALTER TABLE students ADD COLUMN {column} {kind}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return db


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


def salvage(db: sqlite3.Connection) -> dict[str, ClassCopy]:
    """Every class a connection can still read (of a file deleted under it), if what it reads
    is sound."""
    try:
        if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            return {}
        codes = [row[0] for row in db.execute("SELECT code FROM classes")]
        found = {code: read_class(db, code) for code in codes}
    except sqlite3.Error:
        return {}
    return {code: copy for code, copy in found.items() if copy is not None}


def write_back(db: sqlite3.Connection, code: str, copy: ClassCopy, now: float) -> None:
    """What the file lacks of `copy`, and what it holds older: the teacher's later move, a
    student's later answer, a removal (a log lost after part of it reached the file, a backup put
    back). Inside the caller's transaction."""
    db.execute(
        "INSERT INTO classes VALUES (?, ?, ?, ?, ?) ON CONFLICT (code) DO UPDATE SET "
        "state = excluded.state, version = MAX(version + 1, excluded.version) WHERE "
        "json_extract(excluded.state, '$.updated') > json_extract(state, '$.updated')",
        (code, copy.teacher, now, copy.state.to_json(), copy.state.version + 1),
    )
    db.executemany(
        "INSERT OR IGNORE INTO students VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
        [
            (code, m.id, m.nickname, m.joined, now, m.address, m.browser)
            for m in copy.members.values()
        ],
    )
    db.executemany(
        "INSERT INTO students VALUES (?, ?, '', ?, ?, '', '', 1) "
        "ON CONFLICT (code, id) DO UPDATE SET removed = 1",
        [(code, sid, now, now) for sid in copy.removed],
    )
    db.executemany(
        "INSERT INTO answers VALUES (?, ?, ?, ?, ?) ON CONFLICT (code, question, student) "
        "DO UPDATE SET choice = excluded.choice, at = excluded.at WHERE excluded.at > at",
        [
            (code, q, s, c, at)
            for q, chosen in copy.answers.items()
            for s, (c, at) in chosen.items()
            if s not in copy.removed
        ],
    )
    db.executemany(
        "DELETE FROM answers WHERE code = ? AND student = ?",
        [(code, sid) for sid in copy.removed],
    )


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
