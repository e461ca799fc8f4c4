"""How many torch threads a trace made in the server takes (docs/deploying.md): every core
while it runs alone, an equal share of them while several run at once.

The server's own work runs one torch thread per request (ATTNLENS_TORCH_THREADS), requests side
by side. A trace of a Hugging Face model is different: a long input's takes minutes, most
often alone, and on one thread Explore at 8,192 tokens took 1.36 times the command line's
trace, which uses every core (docs/speed.md). torch's thread count is the calling thread's own
(a thread started later begins with the last one set), so each trace sets its own as it starts,
from how many run then, and puts the server's back when it ends.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class TraceThreads:
    """Counts the traces running in this process and gives each its share of the cores."""

    def __init__(self, cores: int, between: int) -> None:
        self.cores, self.between = max(1, cores), max(1, between)
        self._lock = threading.Lock()
        self._running = 0

    def share(self) -> int:
        """The threads a trace starting now takes: the cores over the traces then running."""
        with self._lock:
            return max(1, self.cores // max(1, self._running))

    @contextlib.contextmanager
    def running(self) -> Iterator[int]:
        """Within: this thread's torch on its share of the cores (yielded); after: on the
        server's count between traces."""
        import torch

        with self._lock:
            self._running += 1
            threads = max(1, self.cores // self._running)
        torch.set_num_threads(threads)
        try:
            yield threads
        finally:
            with self._lock:
                self._running -= 1
            torch.set_num_threads(self.between)
