"""A real redis-server (Debian's package) on a free local port, started and stopped by a test.

Never a mock: the class store's Redis tests run against this. Without redis-server the tests
that need it are skipped with the reason (`make test` installs it).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from .server import free_port, stop

REDIS_SERVER = shutil.which("redis-server")
MISSING = "redis-server is not installed (make test installs Debian's redis-server)"


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """redis-server on 127.0.0.1 and a free port, persisting nothing; yields its redis:// URL."""
    assert REDIS_SERVER is not None, MISSING
    port = free_port()
    command = [
        REDIS_SERVER,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(folder),
        "--daemonize",
        "no",
    ]
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _wait(port, proc)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(proc)


def _wait(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Until the server answers PING (it listens a moment after it starts)."""
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
