"""Traces made in worker processes (ATTNLENS_TRACE_WORKERS): the very trace the server would
make, errors as the server would raise them, own bundled models only, and a dead worker
replaced without the session noticing."""

from __future__ import annotations

import os
import signal
import sys
import time
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.app.server.trace_workers import TraceWorkers
from attnlens.app.web import resources as state
from attnlens.record.trace import Trace
from helpers.apptest import require_bundled
from helpers.parts import training
from helpers.server import command_of, descendants

OWN = ("reverse", "translate", "lm", "induction")


@pytest.fixture(scope="module")
def workers() -> Iterator[TraceWorkers]:
    pool = TraceWorkers(1)
    yield pool
    pool.close()


def workers_of(pid: int) -> set[int]:
    """The live worker processes a process has spawned (multiprocessing's spawn_main)."""
    return {p for p in descendants(pid) if b"spawn_main" in command_of(p)}


def same(a: Trace, b: Trace) -> None:
    """Two traces equal to the byte: every field, every array with its dtype."""
    assert a.to_json() == b.to_json()
    for kind in a.kinds:
        x, y = getattr(a, kind), getattr(b, kind)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("name", OWN)
def test_a_trace_made_in_a_worker_is_the_trace_made_here(workers: TraceWorkers, name: str) -> None:
    require_bundled(name)
    lens = attnlens.load(name)
    for text in (lens.example, lens.example[: max(1, len(lens.example) // 2)]):
        same(workers.trace(name, text, None, None), lens.trace(text))


def test_a_target_is_teacher_forced_there_too(workers: TraceWorkers) -> None:
    require_bundled("reverse")
    lens = attnlens.load("reverse")
    same(workers.trace("reverse", "abc", "cbx", None), lens.trace("abc", "cbx"))


def test_bad_input_raises_the_error_the_server_would(workers: TraceWorkers) -> None:
    require_bundled("reverse")
    lens = attnlens.load("reverse")
    with pytest.raises(attnlens.InputError) as here:
        lens.trace("x" * 5000)
    with pytest.raises(attnlens.InputError) as there:
        workers.trace("reverse", "x" * 5000, None, None)
    assert str(there.value) == str(here.value) and "5000" in str(there.value)


def test_only_our_own_bundled_models_are_sent_out(
    workers: TraceWorkers, tiny_model_dir: Path
) -> None:
    """A folder could change under the server (the worker would trace another model than the
    page shows); MiniLM's records would cost more to send than to make."""
    require_bundled("reverse")
    assert workers.serves("reverse")
    for name in ("minilm", str(tiny_model_dir), "reverse @ step 100", "nonsense"):
        assert not workers.serves(name)
        with pytest.raises(ValueError, match="traced in the server"):
            workers.trace(name, "abc", None, None)
    with pytest.raises(ValueError, match="at least 1"):
        TraceWorkers(0)


def test_sessions_at_once_each_get_their_own_trace(workers: TraceWorkers) -> None:
    require_bundled("reverse")
    lens = attnlens.load("reverse")
    texts = [f"text {i} {'x' * i}" for i in range(12)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda t: workers.trace("reverse", t, None, None), texts))
    for text, trace in zip(texts, got, strict=True):
        same(trace, lens.trace(text))


def test_a_killed_worker_is_replaced() -> None:
    require_bundled("reverse")
    others = workers_of(os.getpid())  # the module's pool
    pool = TraceWorkers(1)
    try:
        pool.trace("reverse", "abc", None, None)
        [worker] = workers_of(os.getpid()) - others
        os.kill(worker, signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            pool.trace("reverse", "abd", None, None)
        assert pool.trace("reverse", "abe", None, None).src_tokens[:3] == ("a", "b", "e")
        assert worker not in workers_of(os.getpid())
    finally:
        pool.close()
    deadline = time.monotonic() + 10
    while workers_of(os.getpid()) - others and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not workers_of(os.getpid()) - others, "close() left a worker running"


def test_the_app_traces_in_a_worker_when_asked_and_here_when_it_dies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """shared_trace sends an own bundled model's trace to the worker; a worker that died costs
    the session nothing (the trace is made in the server); a training snapshot, which the
    worker could not load by name, is traced in the server."""
    require_bundled("reverse")
    monkeypatch.setenv("ATTNLENS_TRACE_WORKERS", "1")
    monkeypatch.setenv("ATTNLENS_TRACE_THREADS", "1")  # as the worker and this test trace: the
    state._trace_workers.clear()  # same sums in the same order, so the same bytes
    state._trace_threads.clear()
    others = workers_of(os.getpid())
    try:
        lens = state.shared_lens("reverse")
        same(state.shared_trace(lens, "worker one", None), lens.trace("worker one"))
        [worker] = workers_of(os.getpid()) - others
        os.kill(worker, signal.SIGKILL)
        time.sleep(0.5)
        same(state.shared_trace(lens, "worker two", None), lens.trace("worker two"))
        step = training(lens).snapshots()[0].step
        early = state.shared_snapshot("reverse", step)
        traced = state.shared_trace(early, "worker one", None)
        same(traced, early.trace("worker one"))
        assert not np.array_equal(traced.cross, lens.trace("worker one").cross)
    finally:
        workers = state._trace_workers()
        if workers is not None:
            workers.close()
        state._trace_workers.clear()
        state._trace_threads.clear()


def test_a_worker_does_not_run_the_page_script_streamlit_made_main(tmp_path: Path) -> None:
    """Streamlit makes each script run the __main__ module, and a spawned process first runs
    its parent's __main__: every worker ran the app's page script, with no session."""
    require_bundled("reverse")
    marker = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the page ran')\n")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    main = sys.modules["__main__"]
    sys.modules["__main__"] = page  # as Streamlit leaves it while a script runs
    pool = TraceWorkers(1)
    try:
        assert pool.trace("reverse", "abc", None, None).src_tokens[:3] == ("a", "b", "c")
        assert sys.modules["__main__"] is page  # the script's run keeps its module
    finally:
        sys.modules["__main__"] = main
        pool.close()
    assert not marker.exists()


@pytest.mark.parametrize(
    ("asked", "made"), [("0", None), ("lots", "default"), (None, "default"), ("1", 1), ("9999", -1)]
)
def test_the_server_makes_at_most_one_worker_per_core(
    monkeypatch: pytest.MonkeyPatch, asked: str | None, made: int | str | None
) -> None:
    """Each worker holds its own torch and models (~320 MB): 9999 asked must not start 9999;
    nothing asked (or nothing sensible) is the default for this machine's cores."""
    if asked is None:
        monkeypatch.delenv("ATTNLENS_TRACE_WORKERS", raising=False)
    else:
        monkeypatch.setenv("ATTNLENS_TRACE_WORKERS", asked)
    state._trace_workers.clear()
    try:
        workers = state._trace_workers()
        cores = os.cpu_count()
        default = state.default_trace_workers(cores) or None
        expected = {-1: cores, "default": default}.get(made, made)
        assert (None if workers is None else workers.workers) == expected
    finally:
        state._trace_workers.clear()


@pytest.mark.parametrize(("cores", "workers"), [(None, 0), (1, 0), (2, 1), (64, 1)])
def test_one_worker_by_default_when_there_is_a_core_for_it(cores: int | None, workers: int) -> None:
    """A class on two cores: the server alone held 12 sessions typing, with a worker 24
    (README, "Deploying for a class"); on one core a worker would only take turns with it."""
    assert state.default_trace_workers(cores) == workers


def test_the_server_traces_itself_until_the_worker_has_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker takes seconds to start (torch, the model): the first keystrokes do not wait
    for it. Their traces are made in the server; once the worker has the model loaded, in the
    worker: the server's own lens is not asked again."""
    require_bundled("reverse")
    monkeypatch.setenv("ATTNLENS_TRACE_WORKERS", "1")
    state._trace_workers.clear()
    lens = state.shared_lens("reverse")
    made_here: list[str] = []
    real = type(lens).trace

    def counted(self: attnlens.Lens, text: str, *args: object, **kwargs: object) -> Trace:
        made_here.append(text)
        return real(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(lens), "trace", counted)
    try:
        first = state.shared_trace(lens, "before it started", None)
        assert made_here == ["before it started"]  # the worker is still importing torch
        workers = state._trace_workers()
        assert workers is not None and not workers.ready("reverse")
        deadline = time.monotonic() + 60
        while not workers.ready("reverse"):
            assert time.monotonic() < deadline, "the worker did not start in 60 s"
            time.sleep(0.1)
        made_here.clear()
        later = state.shared_trace(lens, "once it had started", None)
        assert made_here == []
        same(later, real(lens, "once it had started"))
        same(first, real(lens, "before it started"))
    finally:
        workers = state._trace_workers()
        if workers is not None:
            workers.close()
        state._trace_workers.clear()


def test_a_pool_that_broke_while_loading_is_started_again() -> None:
    """ready() on a pool whose worker was killed while loading the model: no, and the next
    call starts a new worker that loads it."""
    require_bundled("reverse")
    others = workers_of(os.getpid())
    pool = TraceWorkers(1)
    try:
        assert not pool.ready("reverse")
        [worker] = workers_of(os.getpid()) - others
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not pool.ready("reverse"):
            assert time.monotonic() < deadline, "no new worker loaded the model in 60 s"
            time.sleep(0.1)
        assert worker not in workers_of(os.getpid())
        assert pool.trace("reverse", "abc", None, None).src_tokens[:3] == ("a", "b", "c")
        assert not pool.ready("not a bundled model")
    finally:
        pool.close()
