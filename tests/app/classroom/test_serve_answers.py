"""The answer route on a real `attnlens serve` as a hostile script uses it (issue 45): one
student's flood is refused past its rate while another student is answered; a thousand posts
that send their headers and never a body are closed within the body's time limit, and those
that leave mid-body are no traceback in the server's log; a connection that never sends a
request is closed too. How fast the other student is answered during a flood is measured by
`python -m bench.class_flood` (a timing, on a machine doing nothing else)."""

from __future__ import annotations

import http.client
import os
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from attnlens.app.classroom.answer_route import STUDENT_RATE
from attnlens.app.classroom.route_parts import BODY_SECONDS
from attnlens.app.server.connections import IDLE_SECONDS
from helpers.classroom import class_asking, post_answer
from helpers.server import SERVER_LOGS, ServerLog, free_port, running, serve_command

pytestmark = pytest.mark.slow
STALLED = 1000  # posts that send headers and never a body


@dataclass(frozen=True)
class Served:
    port: int
    code: str
    students: list[str]
    log: ServerLog


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    url = f"sqlite:///{tmp_path_factory.mktemp('answers') / 'classes.sqlite3'}"
    made, students = class_asking(url, 3)
    port = free_port()
    command = [*serve_command("reverse", port), "--host", "127.0.0.1", "--class-store", url]
    with running(command, port):
        yield Served(port, made.code, students, SERVER_LOGS[-1])


def answer(conn: http.client.HTTPConnection, code: str, me: str, choice: int) -> tuple[int, str]:
    """One answer: the status, and the error said (if any)."""
    status, said = post_answer(conn, code, me, choice)
    return status, str(said.get("error", ""))


def test_a_flood_from_one_student_is_refused_past_its_rate_and_another_is_answered(
    served: Served,
) -> None:
    flooder, other = served.students[0], served.students[1]
    statuses: list[int] = []
    said: set[str] = set()
    stop = threading.Event()

    def flood() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
        while not stop.is_set():
            status, error = answer(conn, served.code, flooder, len(statuses) % 4)
            statuses.append(status)
            said.add(error)
        conn.close()

    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    assert answer(conn, served.code, other, 0) == (200, "")  # the store opened, the route warm
    threads = [threading.Thread(target=flood) for _ in range(4)]
    began = time.monotonic()
    for t in threads:
        t.start()
    seconds = []
    try:
        for choice in (1, 2, 3):
            time.sleep(0.5)
            start = time.monotonic()
            assert answer(conn, served.code, other, choice) == (200, "")
            seconds.append(time.monotonic() - start)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    flooded = time.monotonic() - began
    per_second, burst = STUDENT_RATE
    print(f"flood: {len(statuses)} answers, {statuses.count(200)} taken; the other student's "
          f"answers took {[round(s * 1000) for s in seconds]} ms")  # fmt: skip
    assert set(statuses) == {200, 429}
    assert statuses.count(200) <= burst + per_second * flooded + 1
    assert any("faster than the class takes answers" in e for e in said)
    assert max(seconds) < 2.0  # 0.1 s on a quiet machine: bench.class_flood measures it


def test_a_thousand_stalled_posts_are_closed_in_time_and_leave_no_traceback(
    served: Served,
) -> None:
    """It was 1,027 descriptors held for as long as the clients liked, and a 55-line
    ClientDisconnect traceback in the log for each that left."""
    head = (f"POST /_attnlens/answer/{served.code} HTTP/1.1\r\nHost: t\r\n"
            "Content-Type: application/json\r\nContent-Length: 60\r\n\r\n").encode()  # fmt: skip
    before = served.log.path.read_text(errors="replace")
    socks = []
    for i in range(STALLED):
        s = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        s.sendall(head + (b'{"me": ' if i % 10 == 0 else b""))
        socks.append(s)
    sent = time.monotonic()
    for s in socks[1::10]:  # a tenth leave mid-body
        s.close()
    staying = [s for i, s in enumerate(socks) if i % 10 != 1]
    replies = closed_within(staying, BODY_SECONDS + 30)
    took = time.monotonic() - sent
    assert all(r.startswith(b"HTTP/1.1 408 ") for r in replies.values()), set(replies.values())
    assert len(replies) == len(staying)
    print(f"{len(staying)} stalled posts closed {took:.1f} s after the last was sent")
    time.sleep(1)
    logged = served.log.path.read_text(errors="replace")[len(before) :]
    assert "Traceback" not in logged and "ClientDisconnect" not in logged, logged[-3000:]
    assert held(served.log.proc.pid) < 200  # the server's descriptors, back down


def test_a_connection_that_sends_nothing_is_closed(served: Served) -> None:
    s = socket.create_connection(("127.0.0.1", served.port), timeout=30)
    assert list(closed_within([s], IDLE_SECONDS + 20).values()) == [b""]


def closed_within(socks: list[socket.socket], seconds: float) -> dict[int, bytes]:
    """What each socket received until the server closed it (by its number), waiting at most
    `seconds` for all; every socket closed here after."""
    got: dict[int, bytes] = {s.fileno(): b"" for s in socks}
    open_ = set(got)
    with selectors.DefaultSelector() as sel:
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while open_ and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1.0):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = sock.recv(4096)
                except ConnectionResetError:
                    data = b""
                if data:
                    got[sock.fileno()] += data
                else:
                    open_.discard(sock.fileno())
                    sel.unregister(sock)
    for s in socks:
        s.close()
    assert not open_, f"{len(open_)} of {len(socks)} connections still open after {seconds} s"
    return got


def held(pid: int) -> int:
    """How many descriptors the process holds."""
    return len(os.listdir(Path("/proc") / str(pid) / "fd"))
