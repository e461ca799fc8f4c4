"""Answers that stay (issue 45): 30 students answer through the answer route of a real
`attnlens serve`, once a second each, for over a minute, while the store is hurt in turn. On
SQLite: the `sqlite3` shell reads the file, a `.backup` is taken as docs/deploying.md says, a
second `attnlens serve` starts on the same file and stops, the server is killed (-9) and
restarted, the file is deleted. On Redis (appendonly, appendfsync always, as deploying says):
Redis is killed (-9) and restarted, twice, and the server once. At the end a fresh process asks
the store for each student's answer: it is the last one the server acknowledged (2xx), or one
sent after it whose reply never came. Both stores at once, each with its own server: a minute
of wall time, mostly waiting (a few percent of a core for the students)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers.classroom import QUESTION, class_asking, post_answer
from helpers.redis_server import MISSING, REDIS_SERVER, RedisServer
from helpers.server import SERVER_LOGS, free_port, serve_command, started

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_SERVER is None, reason=MISSING),
    pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 shell is missing"),
]
STUDENTS = 30
SECONDS = 62.0  # how long the students answer
# a fresh process asks the store for every student's answer
READ = """import json, sys
from attnlens.app.classroom.stores import open_store
store = open_store(sys.argv[1])
print(json.dumps({s: store.answer_of(sys.argv[2], s, sys.argv[3]) for s in sys.argv[4:]}))"""


@dataclass
class Student:
    """What one student sent: the choice the server last acknowledged, and the choices sent
    after it whose outcome is not known (no reply came: the server was down or killed)."""

    id: str
    acknowledged: int | None = None
    unknown: set[int] = field(default_factory=set)
    sent: int = 0
    taken: int = 0  # answers acknowledged
    refused: dict[int, int] = field(default_factory=dict)  # status (-1: no connection) -> how many

    def lost(self, stored: int | None) -> bool:
        return (
            self.acknowledged is not None
            and stored != self.acknowledged
            and (stored not in self.unknown)
        )


class Class:
    """A class asking one question, its students, and the server they answer through."""

    def __init__(self, url: str, port: int) -> None:
        made, joined = class_asking(url, STUDENTS)  # from now on only the servers write
        self.students = [Student(me) for me in joined]
        self.url, self.port, self.code = url, port, made.code
        self.stop = threading.Event()
        self.events: list[str] = []
        self.lost: dict[str, int] = {}  # when the store was read -> answers acknowledged, lost
        self.log: list[tuple[float, int | None]] = []

    def answer_for(self, student: Student, until: float) -> None:
        """Once a second (each student at its own moment), a choice other than the last."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        time.sleep(random.random())
        while not self.stop.is_set() and time.monotonic() < until:
            choice = student.sent % 4
            student.sent += 1
            status = self._post(conn, student.id, choice)
            self.log.append((time.monotonic(), status))
            if status is None:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                student.unknown.add(choice)
            elif status == -1:
                student.refused[-1] = student.refused.get(-1, 0) + 1
            elif 200 <= status < 300:
                student.acknowledged, student.unknown = choice, set()
                student.taken += 1
            else:
                student.refused[status] = student.refused.get(status, 0) + 1
                if status >= 500:
                    student.unknown.add(choice)
            self.stop.wait(1.0)
        conn.close()

    def _post(self, conn: http.client.HTTPConnection, me: str, choice: int) -> int | None:
        try:
            if conn.sock is None:
                conn.connect()
        except ConnectionRefusedError:
            return -1  # the server is not up: nothing was sent
        except OSError:
            return None
        try:
            return post_answer(conn, self.code, me, choice)[0]
        except (OSError, http.client.HTTPException, ValueError):
            return None

    def stored(self) -> dict[str, int | None]:
        """Each student's answer as a fresh process finds it in the store."""
        done = subprocess.run(
            [sys.executable, "-c", READ, self.url, self.code, QUESTION.id,
             *(s.id for s in self.students)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]

    def check(self, when: str) -> None:
        """Read the store now (from a fresh process, with no server writing to it): the
        acknowledged answers it lost."""
        stored = self.stored()
        self.lost[when] = sum(1 for s in self.students if s.lost(stored[s.id]))

    def note(self, what: str, began: float) -> None:
        self.events.append(f"{time.monotonic() - began:5.1f} s  {what}")

    def timeline(self, step: int = 4) -> list[str]:
        """How the answers fared, every `step` seconds (status: how many; -1 no server, None
        no reply)."""
        first = min((t for t, _ in self.log), default=0.0)
        lines = []
        for start in range(0, int(SECONDS) + step, step):
            got = [status for t, status in self.log if start <= t - first < start + step]
            lines.append(f"{start:5d} s  {dict(sorted(Counter(got).items(), key=str))}")
        return lines


@contextlib.contextmanager
def answering(lesson: Class, seconds: float) -> Iterator[float]:
    """The students answering for `seconds` from now; yields when they began."""
    began = time.monotonic()
    threads = [
        threading.Thread(target=lesson.answer_for, args=(s, began + seconds), daemon=True)
        for s in lesson.students
    ]
    for t in threads:
        t.start()
    try:
        yield began
    finally:
        for t in threads:
            t.join(seconds + 30)


@contextlib.contextmanager
def serving(lesson: Class, port: int | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """`attnlens serve` on the class's store, once its answer route answers."""
    port = port or lesson.port
    command = [*serve_command("reverse", port), "--host", "127.0.0.1",
               "--class-store", lesson.url]  # fmt: skip
    with started(command, port, timeout=90) as proc:
        reach(port, lesson.code)
        yield proc


def at(began: float, second: float) -> None:
    time.sleep(max(0.0, began + second - time.monotonic()))


def kill(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)


def sqlite_faults(lesson: Class, path: Path) -> None:
    """The shell reads, a backup, a second server, kill -9 and a restart, the file deleted."""
    with contextlib.ExitStack() as server:
        proc = server.enter_context(serving(lesson))
        with answering(lesson, SECONDS) as began:
            at(began, 5)
            shell(path, "SELECT COUNT(*) FROM answers")
            lesson.note("the sqlite3 shell read the file", began)
            at(began, 10)
            backup = path.with_name("backup.sqlite3")
            shell(path, f".backup {backup}")  # docs/deploying.md, word for word
            assert shell(backup, "SELECT COUNT(*) FROM students") == str(STUDENTS)
            lesson.note("a .backup taken", began)
            at(began, 15)
            with serving(lesson, free_port()):  # its store opened: it answered
                lesson.note("a second attnlens serve started on the file", began)
            lesson.note("... and stopped", began)
            at(began, 30)
            kill(proc)
            lesson.note("the server killed (-9)", began)
            lesson.check("after the server was killed")
            server.close()
            proc = server.enter_context(serving(lesson))
            lesson.note("the server restarted", began)
            at(began, 48)
            path.unlink()
            lesson.note("the file deleted", began)
            time.sleep(3.0)  # the server notices at its next answer, and rebuilds the file
            at(began, 54)
            shell(path, "SELECT COUNT(*) FROM answers")
            lesson.note("the sqlite3 shell read the new file", began)
        lesson.check("at the end")
        assert "classes.sqlite3 was deleted" in log_of(proc)  # the fault did happen


def redis_faults(lesson: Class, redis: RedisServer) -> None:
    """Redis killed (-9) and restarted, three times; the server killed and restarted between."""
    with contextlib.ExitStack() as server:
        proc = server.enter_context(serving(lesson))
        with answering(lesson, SECONDS) as began:
            for second, what in ((8, "redis"), (20, "server"), (42, "redis"), (52, "redis")):
                at(began, second)
                if what == "redis":
                    redis.kill()
                    time.sleep(1.0)
                    redis.start()  # it reads back its append-only file
                else:
                    kill(proc)
                    lesson.check("after the server was killed")
                    server.close()
                    proc = server.enter_context(serving(lesson))
                lesson.note(f"{what} killed (-9) and restarted", began)
        lesson.check("at the end")


def log_of(proc: subprocess.Popen[bytes]) -> str:
    """What a server this process started wrote."""
    (log,) = [log for log in SERVER_LOGS if log.proc is proc]
    return log.path.read_text(errors="replace")


def shell(path: Path, command: str) -> str:
    done = subprocess.run(["sqlite3", str(path), command], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def reach(port: int, code: str) -> None:
    """The server ready: its answer route and its follow route (a student's page waits on
    it, through the board) answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=90)
    for path in (f"/_attnlens/answer/{code}?me={'A' * 23}&question={QUESTION.id}",
                 f"/_attnlens/follow/{code}?after=-1"):  # fmt: skip
        conn.request("GET", path)
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 200, path
    conn.close()


def test_thirty_students_answering_through_every_fault_lose_no_acknowledged_answer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "classes.sqlite3"
    redis = RedisServer(tmp_path)
    redis.start()
    lessons = {
        "sqlite": Class(f"sqlite:///{path}", free_port()),
        "redis": Class(redis.url, free_port()),
    }
    runs: dict[str, Callable[[], None]] = {
        "sqlite": lambda: sqlite_faults(lessons["sqlite"], path),
        "redis": lambda: redis_faults(lessons["redis"], redis),
    }
    failed: dict[str, BaseException] = {}

    def run(name: str) -> None:
        try:
            runs[name]()
        except BaseException as err:  # said below, with what the other store did
            failed[name] = err
            lessons[name].stop.set()

    try:
        threads = [threading.Thread(target=run, args=(name,)) for name in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(SECONDS + 240)
    finally:
        redis.stop()
    for name, lesson in lessons.items():
        print(f"{name}:", *lesson.events, *lesson.timeline(), sep="\n  ")
        if name in failed:
            raise AssertionError(f"{name}: {failed[name]!r}") from failed[name]
        refused = {k: sum(s.refused.get(k, 0) for s in lesson.students) for k in (-1, 429, 503)}
        print(f"  {sum(s.sent for s in lesson.students)} answers sent, "
              f"{sum(s.taken for s in lesson.students)} acknowledged; refused (-1: no server) "
              f"{refused}; acknowledged and lost: {lesson.lost}")  # fmt: skip
    for name, lesson in lessons.items():
        assert all(s.acknowledged is not None for s in lesson.students), name
        assert len(lesson.lost) == 2 and not any(lesson.lost.values()), (name, lesson.lost)
