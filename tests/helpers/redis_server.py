"""A real redis-server (Debian's package) on a free local port, started, killed and restarted by a
test.

Never a mock: the class store's Redis tests run against this. Without redis-server the tests
that need it are skipped with the reason (`make test` installs it). By default it runs as
docs/deploying.md tells a deployment to: every write in the append-only file, synced before
Redis replies (appendonly yes, appendfsync always).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from .server import free_port, stop

REDIS_SERVER = shutil.which("redis-server")
MISSING = "redis-server is not installed (make test installs Debian's redis-server)"
DURABLE = ["--appendonly", "yes", "--appendfsync", "always"]
IN_MEMORY = ["--appendonly", "no"]


class RedisServer:
    """One redis-server on a fixed port and folder: kill it (-9, as a crash) and start it again,
    and it reads back what it kept there (with persistence on)."""

    def __init__(self, folder: Path, persist: bool = True) -> None:
        assert REDIS_SERVER is not None, MISSING
        self.folder, self.port = folder, free_port()
        self.command = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            *(DURABLE if persist else IN_MEMORY),
            "--dir",
            str(folder),
            "--daemonize",
            "no",
        ]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait(self.port, self.proc)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last save, as when the machine or the process dies."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None


@contextlib.contextmanager
def redis_server(folder: Path, persist: bool = True) -> Iterator[str]:
    """redis-server on 127.0.0.1 and a free port; yields its redis:// URL."""
    server = RedisServer(folder, persist)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def _wait(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Until the server answers PING (it listens a moment after it starts, and after a restart
    it answers once it has read its append-only file)."""
    import redis

    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server exited with status {proc.returncode}")
        with contextlib.suppress(redis.RedisError):
            if client.ping():
                client.close()
                return
        time.sleep(0.1)
    raise TimeoutError(f"redis-server did not answer on port {port} within {timeout} s")
