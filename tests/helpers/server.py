"""Start `attnlens serve` on a free local port and stop it with everything it started.

Used by the browser tests and the benchmarks that drive the app through a real browser.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


# Ports are taken from a block of this test worker's own, below the kernel's ephemeral range
# (32768-60999): a port from bind(0) was in that range, where another worker, or any outgoing
# connection of a browser, could take it between the check and the server's own bind; the
# server then failed to start while the port answered for someone else's server.
PORTS_FROM, PORTS_PER_WORKER = 20_000, 500


def free_port() -> int:
    """A port nothing listens on, from this xdist worker's own block (gw0, gw1, … or none)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first = PORTS_FROM + (int(worker) if worker.isdigit() else 0) % 20 * PORTS_PER_WORKER
    start = random.randrange(PORTS_PER_WORKER)
    for step in range(PORTS_PER_WORKER):
        port = first + (start + step) % PORTS_PER_WORKER
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}-{first + PORTS_PER_WORKER - 1}")


# What each server writes (stdout and stderr) goes to a file of its own in this folder (the
# tests set it to one of pytest's temporary folders, tests/conftest.py; elsewhere a folder of
# the system's), so that a failing test can show the last lines of its servers' logs.
LOG_FOLDER = "ATTNLENS_TEST_SERVER_LOGS"
LOG_TAIL_LINES = 60


@dataclass(frozen=True)
class ServerLog:
    """A server started by this process and the file that holds its output."""

    command: tuple[str, ...]
    port: int
    path: Path
    proc: subprocess.Popen[bytes]

    def tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last lines the server wrote, after a line naming it."""
        try:
            text = self.path.read_text(errors="replace").splitlines()[-lines:]
        except OSError as err:
            text = [f"(its log {self.path} cannot be read: {err})"]
        state = "running" if self.proc.poll() is None else f"exit status {self.proc.returncode}"
        head = f"port {self.port}, {state}, {' '.join(self.command[-6:])} ({self.path}):"
        return "\n".join([head, *text])


# Every server this process started, in order: the tests' report hook (tests/conftest.py)
# shows the logs of those a failing test started or found running.
SERVER_LOGS: list[ServerLog] = []


def _log_file(port: int) -> Path:
    folder = Path(os.environ.get(LOG_FOLDER) or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f"server-{port}-", suffix=".log", dir=folder)
    os.close(handle)
    return Path(name)


def wait_for_port(
    port: int, proc: subprocess.Popen[bytes], timeout: float = 40.0, log: ServerLog | None = None
) -> None:
    """Return once the server started as `proc` (or a process of its group) listens on port;
    fail early if it died (saying the last lines of its log). Another process answering on the
    port is not enough."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = f":\n{log.tail()}" if log else ""
            raise RuntimeError(f"the server exited with status {proc.returncode}{said}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0 and _listens(proc.pid, port):
                return
        time.sleep(0.2)
    said = f":\n{log.tail()}" if log else ""
    raise TimeoutError(f"the server did not listen on port {port} within {timeout} s{said}")


def _listens(pgid: int, port: int) -> bool:
    """Whether a process of group pgid holds the listening socket on port (read from /proc;
    True where /proc cannot say)."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        return True
    inodes = set()
    for table in tables:
        with contextlib.suppress(OSError):
            for line in table.read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    for task in Path("/proc").iterdir():
        if not task.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int((task / "stat").read_text().rsplit(")", 1)[1].split()[2]) != pgid:
                continue
            if any(os.readlink(fd) in inodes for fd in (task / "fd").iterdir()):
                return True
    return False


@contextlib.contextmanager
def started(
    command: list[str], port: int, env: dict[str, str] | None = None, timeout: float = 40.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Any server command, in its own process group, once it listens on port; yields its
    process and is always stopped with everything it started. What it writes goes to a log
    file (SERVER_LOGS)."""
    path = _log_file(port)
    with path.open("wb") as out:
        proc = subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
    log = ServerLog(tuple(command), port, path, proc)
    SERVER_LOGS.append(log)
    try:
        wait_for_port(port, proc, timeout, log)
        yield proc
    finally:
        stop(proc)
        if not os.environ.get(LOG_FOLDER):  # outside the tests no one reads it afterwards
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def running(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Any server command listening on port, in its own process group; yields its URL and is
    always stopped with everything it started."""
    with started(command, port, env):
        yield f"http://127.0.0.1:{port}"


def serve_command(model_name: str, port: int) -> list[str]:
    """`attnlens serve --port PORT --model MODEL_NAME`, run by this Python. `serve` execs
    Streamlit in its own process, so the process started is the server."""
    return [sys.executable, "-m", "attnlens.app.cli.main", "serve", "--port", str(port),
            "--model", model_name]  # fmt: skip


def serving(
    model_name: str, env: dict[str, str] | None = None
) -> contextlib.AbstractContextManager[str]:
    """`attnlens serve --model model_name` on a free port; yields its URL; always stopped."""
    port = free_port()
    return running(serve_command(model_name, port), port, env)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server and the streamlit process it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _group_alive(proc.pid):
        proc.poll()  # reap the parent so only live members keep the group
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def descendants(pid: int) -> list[int]:
    """The live processes pid started, those they started, and so on (zombies included)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):  # one that ended meanwhile
                ppid = int(proc_stat(int(entry.name))[1])
                parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        out += children
        todo += children
    return out


def proc_stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command's name (which may hold spaces): state,
    parent, ... (utime and stime at 11 and 12)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def command_of(pid: int) -> bytes:
    """A process's command line, NUL-separated (empty once it has ended or is a zombie)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
