"""The models shared by every session, loaded once per process, and the one this session uses.

The server's settings for speed (docs/deploying.md):

- one torch intra-op thread per request (ATTNLENS_TORCH_THREADS): requests already run side
  by side in threads, and on a small machine a second torch thread per request only fights
  them and the browser for the same cores;
- no full garbage collection after every rerun (`attnlens serve` switches Streamlit's off,
  app/cli/main.py STREAMLIT_OPTIONS): it walked the ~260k objects of torch and the models each time;
- traces shared between sessions (ATTNLENS_TRACE_CACHE_MB): a class types the same examples;
  those that took long also kept on disk (ATTNLENS_TRACE_DISK_MB, app/server/trace_shelf.py), so
  a long input reopened from its link, in a new session or after a restart, is not traced again;
- traces of our own bundled models made in a worker process, off the server's GIL, on a machine
  of two cores or more (ATTNLENS_TRACE_WORKERS, app/server/trace_workers.py): a class of 32 on 2
  cores where the server alone held 16; a single user's keystroke is as fast either way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import streamlit as st

import attnlens
from attnlens.app.server.memory import freeze_long_lived
from attnlens.app.server.trace_cache import SharedTraces
from attnlens.app.server.trace_shelf import TraceShelf, shelf_key
from attnlens.app.server.trace_threads import TraceThreads
from attnlens.app.server.trace_workers import TraceWorkers
from attnlens.app.web.safe_text import md
from attnlens.model.lenses.lens import RecordMode
from attnlens.model.lenses.parts import Training
from attnlens.model.lenses.registry import check_allowed
from attnlens.model.training.snapshots import SnapshotScore
from attnlens.record.errors import InputError, clipped
from attnlens.record.trace import Trace

DEFAULT_MODEL = "reverse"
TORCH_THREADS = 1
TRACE_CACHE_MB = 32  # kept after every session let go; within 10% of an idle server


def default_trace_workers(cores: int | None) -> int:
    """Worker processes for traces unless ATTNLENS_TRACE_WORKERS says: one beside the server
    when there is a core for it (each holds its own torch and models, ~320 MB), else none."""
    return 1 if (cores or 1) >= 2 else 0


def _setting(name: str, default: int, env: Mapping[str, str] | None = None, least: int = 1) -> int:
    """A whole number of at least `least` from the environment; the default for anything else."""
    raw = (os.environ if env is None else env).get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= least else default


@st.cache_resource(show_spinner=False, max_entries=8)
def shared_lens(name: str) -> attnlens.Lens:
    """One lens per model name and process; lenses keep no per-call state, so sharing is safe."""
    import torch  # only here: the app starts without torch until a model is wanted

    torch.set_num_threads(_setting("ATTNLENS_TORCH_THREADS", TORCH_THREADS))
    lens = attnlens.load(name)
    freeze_long_lived()  # the libraries and the model, out of full collections (memory.py)
    return lens


@st.cache_resource(show_spinner=False, max_entries=16)
def shared_snapshot(name: str, step: int) -> attnlens.Lens:
    """A model's training snapshot, loaded through the model (never by a path a user gives)."""
    return _training(name).snapshot(step)


def _training(name: str) -> Training:
    """A model's snapshots; the pages offer them only where capabilities.training has some."""
    can = shared_lens(name).capabilities
    if can.training is None:
        raise InputError(can.reason("training"))
    return can.training


@st.cache_resource(show_spinner=False)
def _shared_traces() -> SharedTraces:
    budget = _setting("ATTNLENS_TRACE_CACHE_MB", TRACE_CACHE_MB) * 2**20
    return SharedTraces(budget, shelf=TraceShelf.from_env())


@st.cache_resource(show_spinner=False, max_entries=16)
def _fingerprint(name: str, lens_id: int, _lens: attnlens.Lens) -> str:
    """The weights' fingerprint of a shared lens, taken once (it hashes an own model's
    weights)."""
    return _lens.fingerprint()


def shared_trace(
    lens: attnlens.Lens,
    text: str,
    target: str | None,
    pair: str | None = None,
    record: RecordMode = "weights",
) -> Trace:
    """The trace of text (and target, and a pair's second text) on lens, kept as `record` asks,
    computed once for every session that asks; its arrays are read-only. Bad input raises the
    lens's InputError, as lens.trace does. The workers trace our own models, whose weights
    always fit: `auto` keeps the weights there too (OwnLens.recorded)."""
    workers = _trace_workers()

    def compute() -> Trace:
        name = lens.name
        # until the worker has started and has the model loaded, the trace is made here
        ours = workers is not None and workers.ready(name) and lens is shared_lens(name)
        if ours and record != "scores" and workers is not None:
            with contextlib.suppress(BrokenProcessPool):  # a worker died: made here too
                return workers.trace(name, text, target, pair)
        with _trace_threads().running():  # the cores, shared with traces running meanwhile
            return lens.trace(text, target, pair=pair, record=record)

    def shelved() -> str:
        return shelf_key(_fingerprint(lens.name, id(lens), lens), text, target, pair, record)

    key = (lens.name, text, target, pair, record)
    return _shared_traces().get(lens, key, compute, shelved)


@st.cache_resource(show_spinner=False)
def _trace_threads() -> TraceThreads:
    """Torch threads of a trace made in the server: ATTNLENS_TRACE_THREADS, by default the
    cores shared among the traces running at once (app/server/trace_threads.py)."""
    cores = _setting("ATTNLENS_TRACE_THREADS", os.cpu_count() or 1)
    return TraceThreads(cores, _setting("ATTNLENS_TORCH_THREADS", TORCH_THREADS))


@st.cache_resource(show_spinner=False)
def _trace_workers() -> TraceWorkers | None:
    """The server's trace workers (ATTNLENS_TRACE_WORKERS; default_trace_workers: one on two
    cores or more, 0 makes every trace in the server), at most one per core: each holds its
    own torch and models (~320 MB), and more than the cores would only take turns on them."""
    cores = os.cpu_count()
    asked = _setting("ATTNLENS_TRACE_WORKERS", default_trace_workers(cores), least=0)
    workers = min(asked, cores or 1)
    if not workers:
        return None
    return TraceWorkers(workers, _setting("ATTNLENS_TORCH_THREADS", TORCH_THREADS))


@st.cache_resource(show_spinner=False)
def _background() -> ThreadPoolExecutor:
    """One worker for the server's long jobs, so that they queue rather than pile up."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnlens-background")


@st.cache_resource(show_spinner=False, max_entries=16)
def _scoring(name: str) -> Future[list[SnapshotScore]]:
    """Every snapshot of a model scored on held-out examples, started once per process."""
    return _background().submit(_training(name).snapshot_scores)


def snapshot_scores(name: str) -> list[SnapshotScore] | None:
    """Each snapshot of the model scored on held-out examples of its task ([] when it cannot
    be scored), or None while the scoring still runs in the background (it takes tens of
    seconds, and the same for every session, so it is computed once per process). A failed
    scoring raises its error here."""
    job = _scoring(name)
    return job.result() if job.done() else None


def load_lens(name: str) -> attnlens.Lens | None:
    """The lens for name, with a spinner while it loads; an error message in place if it fails.
    A session's reruns on a model it has already loaded get no spinner: it started a timer
    thread and sent a message on every keystroke, before any figure."""
    shown = st.session_state.get("_lens_loaded") == name
    lens = _loaded(lambda: _allowed_lens(name), name, spinner=not shown)
    st.session_state["_lens_loaded"] = None if lens is None else name
    return lens


def _allowed_lens(name: str) -> attnlens.Lens:
    """The shared lens, once this deployment allows the name (the cache alone would hand out a
    model loaded before the policy changed)."""
    check_allowed(name)
    return shared_lens(name)


def load_snapshot(name: str, step: int) -> attnlens.Lens | None:
    """A snapshot of the model, like load_lens."""
    return _loaded(lambda: shared_snapshot(name, step), f"{name} at step {step}")


def _loaded(load: object, shown: str, spinner: bool = True) -> attnlens.Lens | None:
    try:
        with st.spinner(md(f"Loading model {shown}…")) if spinner else contextlib.nullcontext():
            return load()  # type: ignore[operator,no-any-return]
    except Exception as err:  # any failure to load is the user's to read, not a traceback
        st.error(md(f"Could not load model {clipped(shown)!r}: {err}"))
        return None
