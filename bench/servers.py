"""The two servers every latency target compares: `attnlens serve` and the bare Streamlit page.

Both run as Streamlit runs them for a user (the same flags `attnlens serve` passes), each in its
own process group, and report the CPU their process has used, so the bench can say what one
keystroke costs the server.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from attnlens.app.cli.serve import STREAMLIT_OPTIONS, server_environment
from attnlens.app.web.resources import default_trace_workers
from tests.helpers.server import descendants, free_port, proc_stat, serve_command
from tests.helpers.server import started as process

ROOT = Path(__file__).resolve().parents[1]
BARE_PAGE = ROOT / "bench" / "minimal_app.py"
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Server:
    """A running server: its URL and the process to ask for CPU time."""

    name: str
    url: str
    pid: int

    def cpu_seconds(self) -> float:
        """User + system CPU of the server process so far (its finished threads included),
        and of the processes it runs (trace workers: ATTNLENS_TRACE_WORKERS)."""
        return sum(_cpu(pid) for pid in (self.pid, *descendants(self.pid)))


def _cpu(pid: int) -> float:
    try:
        fields = proc_stat(pid)
    except OSError:  # it ended meanwhile
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


@contextlib.contextmanager
def started(
    name: str,
    command: list[str],
    port: int,
    timeout: float = 90.0,
    env: dict[str, str] | None = None,
) -> Iterator[Server]:
    """Run command (which listens on port) until the block ends; always stopped."""
    with process(command, port, env=env, timeout=timeout) as proc:
        yield Server(name, f"http://127.0.0.1:{port}", proc.pid)


def attnlens_server(
    model: str, trace_workers: int | None = None
) -> contextlib.AbstractContextManager[Server]:
    """`attnlens serve --model model`, as a user starts it (it becomes the Streamlit process),
    with traces of own bundled models made in that many worker processes (0: in it; None: as
    the server decides by default on this machine, whatever the environment running the bench
    says)."""
    port = free_port()
    workers = default_trace_workers(os.cpu_count()) if trace_workers is None else trace_workers
    env = {"ATTNLENS_TRACE_WORKERS": str(workers)}
    return started("attnlens", serve_command(model, port), port, env=env)


def bare_server() -> contextlib.AbstractContextManager[Server]:
    """The bare page (bench/minimal_app.py) under `streamlit run`, with attnlens serve's options
    (no file watcher, no forced garbage collection after each rerun) and its allocator
    settings: the same server, so the ratio is the price of attnlens's own work."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(BARE_PAGE), "--server.port"]
    env = server_environment(os.environ)
    return started("bare", [*command, str(port), *STREAMLIT_OPTIONS], port, env=env)


def in_server_environment(module: str, argv: list[str] | None) -> None:
    """Return at once in a process that has `attnlens serve`'s allocator settings; otherwise
    start `python -m module` again with them (glibc and pyarrow read them only at start-up), so
    what the bench measures in-process allocates as the server does."""
    wanted = server_environment(os.environ)
    if all(os.environ.get(k) == v for k, v in wanted.items()):
        return
    args = [sys.executable, "-m", module, *(sys.argv[1:] if argv is None else argv)]
    os.execve(sys.executable, args, wanted)
