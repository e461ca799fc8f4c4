"""Classes in one SQLite file: every answer is committed and synced to disk before the student is
told it counted (write-ahead log, synchronous=FULL), so neither a server restart nor a power cut
loses one.

The file is checked before every call and after every write: deleted, replaced by another file or
overwritten, it is rebuilt (from the open connection where it can still be read, and from the
server's copy of each class it served) and the teacher is told. A file that is not a readable
database when the server starts is moved aside with a message, and a new one started.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from attnlens.app.classroom.limits import ClassError, StoreUnavailableError, limit_error
from attnlens.app.classroom.names import nickname
from attnlens.app.classroom.sqlite_file import (
    MAGIC,
    Journal,
    connect,
    identity,
    journal,
    move_aside,
    read_class,
    remove_file,
    salvage,
    unreadable,
    write_back,
)
from attnlens.app.classroom.state import ClassCopy, ClassState, Member, Roster
from attnlens.app.classroom.store import ACTIVE_SECONDS, KEEP_SECONDS, NOTICES, ClassStore


class SQLiteStore(ClassStore):
    """One connection, used under a lock: SQLite writes one at a time anyway, and a class's
    reads take microseconds."""

    def __init__(self, path: Path, busy_seconds: float = 10.0) -> None:
        super().__init__()
        self.path, self.url, self._busy = path, f"sqlite:///{path}", busy_seconds
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            damaged = unreadable(path)
            aside = move_aside(path) if damaged else None
            self._db = self._connect()
            self._file = os.open(path, os.O_RDONLY)  # closed only with the connection
            self._identity = identity(path, self._file)
            self._journal = self._journal_now()
            self._notices = [
                (float(a), str(t))
                for a, t in self._db.execute(
                    "SELECT at, text FROM notices ORDER BY at DESC LIMIT ?", (NOTICES,)
                )
            ][::-1]
            self._forget_old(time.time())
        except (OSError, sqlite3.Error) as err:
            raise StoreUnavailableError(f"class store {path}: cannot open it ({err})") from None
        if aside is not None:
            self.notice(
                f"the file {path} was not a readable class store ({damaged}); it was "
                f"moved to {aside.name} and a new, empty store started"
            )

    def _connect(self) -> sqlite3.Connection:
        return connect(self.path, self._busy)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The connection, one caller at a time. A database error (another process writing for
        longer than busy_seconds, the file gone or unreadable) becomes a StoreUnavailableError
        naming the store, as the Redis store's do: a page shows it as a message."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as err:
                raise StoreUnavailableError(f"class store {self.url}: {err}") from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._locked():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _forget_old(self, now: float) -> None:
        old = [
            row[0]
            for row in self._db.execute(
                "SELECT code FROM classes WHERE json_extract(state, '$.updated') < ?",
                (now - KEEP_SECONDS,),
            )
        ]
        for table in ("answers", "students", "handovers", "classes"):
            self._db.executemany(f"DELETE FROM {table} WHERE code = ?", [(c,) for c in old])
        self._db.execute("DELETE FROM notices WHERE at < ?", (now - KEEP_SECONDS,))

    def ping(self) -> None:
        with self._locked():
            self._db.execute("SELECT 1")

    def _close(self) -> None:
        with self._locked():
            self._db.close()
            os.close(self._file)

    def _journal_now(self) -> Journal | None:
        """The log and index the connection writes to; None when it is not in WAL mode (a
        file system without shared memory), which has neither."""
        mode = self._db.execute("PRAGMA journal_mode").fetchone()[0]
        return journal(self.path) if str(mode).lower() == "wal" else None

    def notice(self, text: str) -> None:
        super().notice(text)
        with contextlib.suppress(StoreUnavailableError), self._locked():  # kept for a restart
            self._db.execute("INSERT INTO notices VALUES (?, ?)", (time.time(), text))

    # -- noticing a file that is no longer ours, and rebuilding it --------------------------------

    def _check(self, now: bool = False) -> str | None:
        try:  # under the lock: a reconnect closes the descriptor (read then: EBADF) and reopens
            with self._lock:
                found, ours, log = identity(self.path, self._file), self._identity, self._journal
        except FileNotFoundError:
            return f"The class store's file {self.path} was deleted"
        except OSError as err:  # there, but not readable now: no reason to rebuild it
            raise StoreUnavailableError(f"class store {self.url}: {err.strerror}") from None
        if found[:2] != ours[:2]:
            return f"The class store's file {self.path} was replaced by another file"
        if found[2] != MAGIC:
            return f"The class store's file {self.path} was overwritten (it is not a database)"
        if log is not None and journal(self.path) != log:
            return (
                f"The class store's write-ahead log ({self.path.name}-wal and -shm) was "
                "deleted or replaced under the server"
            )
        return None

    def _reset(self, why: str) -> str:
        """Reconnect to the path: to the store found there when it is a sound one (another
        server's rebuild, a backup put back), else to a new file, whatever was there moved aside;
        every class the old connection can still read (all of them, for a file deleted) is
        written into it, what it holds kept."""
        try:
            salvaged, aside = self._reconnect()
        except (OSError, sqlite3.Error) as err:  # tried again at the next call
            raise StoreUnavailableError(
                f"class store {self.url}: cannot rebuild it ({err})"
            ) from None
        for code, copy in salvaged.items():
            self._put_back(code, copy)
        kept = f" The file found in its place was kept as {aside.name}." if aside else ""
        read = (
            f" The old file could still be read: its {len(salvaged)} class(es) were copied over."
            if salvaged
            else " Classes this server had not served since it started could not be read back."
        )
        return kept + read

    def _reconnect(self) -> tuple[dict[str, ClassCopy], Path | None]:
        """What the old connection still reads, and where a damaged file at the path went."""
        with self._lock:
            salvaged = salvage(self._db)
            if not self._same_file():
                with contextlib.suppress(sqlite3.Error):
                    # the log's pages into the old file and the log emptied: left at the path,
                    # they would be read into whatever file is there now
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            # else only the log was lost: its pages are not written into a file that other
            # connections may have written to since (closing checkpoints them only when no
            # other connection has the file open); what they hold is in `salvaged`
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            with contextlib.suppress(OSError):
                os.close(self._file)
            aside = None
            if self.path.exists() and unreadable(self.path):
                aside = move_aside(self.path, journal=False)
            if aside is not None or not self.path.exists():
                for suffix in ("-wal", "-shm"):  # the old file's journal: no longer anyone's
                    remove_file(self.path.with_name(self.path.name + suffix))
            self._db = self._connect()
            self._file = os.open(self.path, os.O_RDONLY)
            self._identity = identity(self.path, self._file)
            self._journal = self._journal_now()
        return salvaged, aside

    def _same_file(self) -> bool:
        """Whether the path still names the file the connection has open."""
        try:
            return identity(self.path, self._file)[:2] == self._identity[:2]
        except OSError:
            return False

    def _dump(self, code: str) -> ClassCopy | None:
        with self._locked():
            return read_class(self._db, code)

    def _put_back(self, code: str, copy: ClassCopy) -> None:
        with self._transaction():
            write_back(self._db, code, copy, time.time())

    # -- the class --------------------------------------------------------------------------------

    def _insert(self, code: str, teacher: str, state: ClassState) -> bool:
        with self._locked():
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO classes VALUES (?, ?, ?, ?, 0)",
                (code, teacher, time.time(), state.to_json()),
            )
            return cursor.rowcount == 1

    def _state(self, code: str) -> ClassState | None:
        with self._locked():
            row = self._db.execute(
                "SELECT state, version FROM classes WHERE code = ?", (code,)
            ).fetchone()
        return None if row is None else ClassState.from_json(row[0], int(row[1]))

    def _teacher_hash(self, code: str) -> str | None:
        with self._locked():
            row = self._db.execute("SELECT teacher FROM classes WHERE code = ?", (code,)).fetchone()
        return None if row is None else str(row[0])

    def _update(self, code: str, state: ClassState) -> ClassState:
        with self._transaction():
            self._db.execute(
                "UPDATE classes SET state = ?, version = version + 1 WHERE code = ?",
                (state.to_json(), code),
            )
            row = self._db.execute("SELECT version FROM classes WHERE code = ?", (code,)).fetchone()
        if row is None:
            raise ClassError("this class has ended or expired")
        return state.moved(version=int(row[0]))

    # -- students ---------------------------------------------------------------------------------

    def _member(self, code: str, student: str) -> Member | None:
        with self._locked():
            row = self._db.execute(
                "SELECT nickname, address, browser, joined FROM students "
                "WHERE code = ? AND id = ? AND removed = 0",
                (code, student),
            ).fetchone()
        return None if row is None else Member(student, *row)

    def _removed(self, code: str, student: str) -> bool:
        with self._locked():
            return (
                self._db.execute(
                    "SELECT 1 FROM students WHERE code = ? AND id = ? AND removed = 1",
                    (code, student),
                ).fetchone()
                is not None
            )

    def _join(self, code: str, member: Member, state: ClassState, limited: bool) -> Member:
        with self._transaction():
            joined, from_address, from_browser = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(address = ?), 0), COALESCE(SUM(browser = ?), 0) "
                "FROM students WHERE code = ? AND removed = 0",
                (member.address, member.browser, code),
            ).fetchone()
            if not limited:
                from_address = from_browser = 0
            refused = limit_error(state, int(joined), int(from_address), int(from_browser))
            if refused:
                raise ClassError(refused)
            taken = {
                r[0]
                for r in self._db.execute("SELECT nickname FROM students WHERE code = ?", (code,))
            }
            new = Member(member.id, nickname(taken), member.address, member.browser, member.joined)
            self._db.execute(
                "INSERT OR REPLACE INTO students VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                (code, new.id, new.nickname, new.joined, new.joined, new.address, new.browser),
            )
        return new

    def _remove(self, code: str, student: str) -> bool:
        with self._transaction():
            cursor = self._db.execute(
                "UPDATE students SET removed = 1 WHERE code = ? AND id = ? AND removed = 0",
                (code, student),
            )
            self._db.execute("DELETE FROM answers WHERE code = ? AND student = ?", (code, student))
        return cursor.rowcount == 1

    def _members(self, code: str) -> list[Member]:
        with self._locked():
            rows = self._db.execute(
                "SELECT id, nickname, address, browser, joined FROM students "
                "WHERE code = ? AND removed = 0",
                (code,),
            ).fetchall()
        return [Member(*row) for row in rows]

    def _seen(self, code: str, student: str, now: float) -> None:
        with self._locked():
            self._db.execute(
                "UPDATE students SET seen = ? WHERE code = ? AND id = ?", (now, code, student)
            )

    def _roster(self, code: str) -> Roster:
        with self._locked():
            joined, active = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(seen >= ?), 0) FROM students "
                "WHERE code = ? AND removed = 0",
                (time.time() - ACTIVE_SECONDS, code),
            ).fetchone()
            most = self._db.execute(
                "SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM students "
                "WHERE code = ? AND removed = 0 AND address != '' GROUP BY address)",
                (code,),
            ).fetchone()[0]
        return Roster(int(joined), int(active), int(most))

    # -- one-time codes for another device of the teacher's --------------------------------------

    def _offer(self, code: str, digest: str, expires: float) -> None:
        with self._locked():
            row = (code, digest, expires)
            self._db.execute("INSERT OR REPLACE INTO handovers VALUES (?, ?, ?, 0, NULL)", row)

    def _claim(self, code: str, digest: str, now: float, most_wrong: int) -> bool:
        with self._transaction():
            row = self._db.execute(
                "SELECT digest, expires FROM handovers WHERE code = ? AND digest != ''", (code,)
            ).fetchone()
            if row is not None and hmac.compare_digest(row[0], digest) and now <= row[1]:
                self._db.execute(
                    "UPDATE handovers SET digest = '', used = ? WHERE code = ?", (now, code)
                )
                return True
            self._db.execute(
                "UPDATE handovers SET wrong = wrong + 1, digest = CASE WHEN wrong + 1 >= ? "
                "THEN '' ELSE digest END WHERE code = ? AND digest != ''",
                (most_wrong, code),
            )
        return False

    def _claimed(self, code: str) -> float | None:
        with self._locked():
            row = self._db.execute("SELECT used FROM handovers WHERE code = ?", (code,)).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    # -- answers ----------------------------------------------------------------------------------

    def _answer(self, code: str, student: str, question_id: str, choice: int, now: float) -> bool:
        with self._transaction():
            stored = self._answerable(code, student, question_id, choice)
            if stored:
                self._db.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                    (code, question_id, student, choice, now),
                )
        return stored

    def _answerable(self, code: str, student: str, question_id: str, choice: int) -> bool:
        row = self._db.execute(
            "SELECT state, version FROM classes WHERE code = ?", (code,)
        ).fetchone()
        joined = self._db.execute(
            "SELECT 1 FROM students WHERE code = ? AND id = ? AND removed = 0", (code, student)
        ).fetchone()
        if row is None or joined is None:
            return False
        state = ClassState.from_json(row[0], int(row[1]))
        return (
            state.question_id == question_id
            and state.revealed != question_id
            and 0 <= choice < state.options
        )

    def _choices(self, code: str, question_id: str) -> list[int]:
        with self._locked():
            rows = self._db.execute(
                "SELECT choice FROM answers WHERE code = ? AND question = ?", (code, question_id)
            ).fetchall()
        return [int(r[0]) for r in rows]

    def _answer_of(self, code: str, student: str, question_id: str) -> int | None:
        with self._locked():
            row = self._db.execute(
                "SELECT choice FROM answers WHERE code = ? AND question = ? AND student = ?",
                (code, question_id, student),
            ).fetchone()
        return None if row is None else int(row[0])
