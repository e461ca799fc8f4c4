"""Traces of the bundled models run in worker processes, off the server's GIL (one by default on
two cores or more, ATTNLENS_TRACE_WORKERS; docs/deploying.md).

With a class typing into one server, the limit is Python's GIL, not the cores: at 16 sessions
on 2 cores the server used 1.2 cores and every keystroke's CPU doubled while threads queued
for the lock, and a third of the time they held it went to the model call (the greedy decoding
of the output, one small step at a time, mostly Python). A worker process runs that call on a
GIL of its own; the server waits for it without holding one.

What comes back is the trace by value, unpickled: the arrays a trace run in the server gives,
byte for byte (tests/app/server/test_trace_workers.py). Only our own bundled models are sent out: a
worker loads the model again by its name, and those files cannot change under the server (a
user's folder could, and the worker would trace another model than the page shows); MiniLM's
records, up to hundreds of MB, would cost more to send than to make. A worker that dies is
replaced, and the trace it was running is made in the server instead.

A worker takes seconds to start (it imports torch and loads the model), and no keystroke should
wait for that: `ready` starts the workers and has them load a model in the background, and
until they have, the server makes that model's traces itself.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import attnlens
from attnlens.model.lenses.registry import is_own_bundled
from attnlens.record.trace import Trace

MAX_MODELS = 8  # models a worker keeps loaded (the server's own cache holds as many)
PARENT_CHECK_S = 1.0  # how often a worker looks whether its server is still there


class TraceWorkers:
    """A pool of worker processes tracing own bundled models, started on first use."""

    def __init__(self, workers: int, torch_threads: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"trace workers must be at least 1, got {workers}")
        self.workers, self.torch_threads = workers, torch_threads
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        # each model the workers were asked to load, by name, with the pool that loads it
        self._loaded: dict[str, tuple[ProcessPoolExecutor, Future[None]]] = {}

    @staticmethod
    def serves(name: str) -> bool:
        """Whether a trace on this model may be made in a worker (own bundled models only)."""
        return is_own_bundled(name)

    def ready(self, name: str) -> bool:
        """Whether the workers can trace this model now, without first starting (seconds).
        The first call for a model starts the workers if need be and has them load it, in the
        background, and answers no until they have. A pool that broke meanwhile is started
        again on the next call; a model they failed to load is not asked for again."""
        if not self.serves(name):
            return False
        with self._lock:
            loading = self._loaded.get(name)
        if loading is None:
            pool = self._started()
            try:
                job = pool.submit(_load, name)
            except (BrokenProcessPool, RuntimeError):  # broken, or shut down meanwhile
                self._drop(pool)
                return False
            with self._lock:
                loading = self._loaded.setdefault(name, (pool, job))
        pool, job = loading
        if not job.done():
            return False
        if isinstance(job.exception(), BrokenProcessPool):
            self._drop(pool)
            return False
        return job.exception() is None

    def trace(self, name: str, text: str, target: str | None, pair: str | None) -> Trace:
        """What `attnlens.load(name).trace(text, target, pair=pair)` returns, made in a
        worker (which loads the model first, if `ready` has not had it loaded); bad input
        raises the same InputError. BrokenProcessPool when the worker died (the next call
        starts new ones)."""
        if not self.serves(name):
            raise ValueError(f"{name!r} is not a bundled model of our own: traced in the server")
        pool = self._started()
        try:
            return pool.submit(_trace, name, text, target, pair).result()
        except BrokenProcessPool:
            self._drop(pool)
            raise

    def _started(self) -> ProcessPoolExecutor:
        """The pool, its workers all started now (the pool would start them one per call)."""
        with self._lock:
            if self._pool is None:
                pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=multiprocessing.get_context("spawn"),  # never fork a threaded server
                    initializer=_start_worker,
                    initargs=(self.torch_threads,),
                )
                with _nothing_to_run_as_main():
                    for _ in range(self.workers):
                        pool.submit(int)  # each call starts a worker while none is idle
                self._pool = pool
            return self._pool

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        """Let a broken pool go, and what it had loaded: the next call starts new workers."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
            self._loaded = {n: (p, j) for n, (p, j) in self._loaded.items() if p is not pool}
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (a running trace is finished first)."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._loaded.clear()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _nothing_to_run_as_main() -> Iterator[None]:
    """Start processes here without their running this process's __main__ again.

    A spawned process first runs its parent's main module (as __mp_main__). In a Streamlit
    server that is the page script: Streamlit makes each script run the __main__ module. Every
    worker ran the app's script with no session (44 warnings of a missing script context, the
    default model loaded, Streamlit imported). A bare module in its place has nothing to run;
    the script's run keeps its own module (its globals are that module's, not sys.modules')."""
    main = sys.modules.get("__main__")
    bare = types.ModuleType("__main__")
    sys.modules["__main__"] = bare
    try:
        yield
    finally:
        if sys.modules.get("__main__") is bare and main is not None:  # unless a run replaced it
            sys.modules["__main__"] = main


def _start_worker(torch_threads: int) -> None:
    import torch

    # Ctrl-C in the terminal reaches the whole process group: the server stops its workers
    # itself (and a worker would print a KeyboardInterrupt traceback for it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(torch_threads)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()


def _exit_with(parent: int) -> None:
    """End this worker once the server that started it is gone: a server killed outright
    (SIGKILL, the OOM killer) never shuts its pool down, and the worker would hold its
    ~320 MB for good."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


@functools.lru_cache(maxsize=MAX_MODELS)
def _lens(name: str) -> attnlens.Lens:
    """The worker's own copy of a bundled model (a worker process serves one server)."""
    return attnlens.load(name)


def _load(name: str) -> None:
    _lens(name)


def _trace(name: str, text: str, target: str | None, pair: str | None) -> Trace:
    return _lens(name).trace(text, target, pair=pair)
