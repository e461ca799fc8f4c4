"""Traces shared by every session of one server: a class types the same examples.

Keyed by the model (its name and the very lens object that ran it) and the input. What comes
back is a value nobody can change: the Trace is a frozen dataclass, and every array in a
cached Trace is made read-only, so one session can never alter what another sees. When two
sessions ask for the same trace at once, one runs the model and the other waits for it.
Memory is bounded: least recently used traces go first once their arrays exceed the budget.
Beyond that budget a trace is still shared while any session holds it (a weak reference), and
goes when the last session holding it lets go: a closed tab gives its memory back.

A trace that took long to make is also kept on disk (trace_shelf.py), so a long input reopened
from its link after every session let it go is read back, not traced again.

A trace of a long input leaves the process holding far more than its record: what the forward
pass freed stays with the allocator (app/server/memory.py). Once a trace of at least
TRIM_FROM_BYTES is made, that memory is handed back; a class's short traces never pay for it.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import Future
from types import MappingProxyType

import numpy as np

from attnlens.app.server.memory import give_back_memory
from attnlens.app.server.trace_shelf import TraceShelf
from attnlens.record.scores import LayerScores
from attnlens.record.summary import Summary
from attnlens.record.trace import Trace

Key = tuple[Hashable, ...]
# a trace this large was a long input: its forward pass freed several times as much (a record of
# 116 MB at 2,048 tokens on Llama-3.2-1B's shape left 160 MB more with the allocator)
TRIM_FROM_BYTES = 16 * 2**20


def _arrays(trace: Trace) -> Iterator[np.ndarray]:
    """Every array the trace holds: its fields', those of its dict fields (layer_masks), and
    those of a long input's scores and summaries (each layer's q, k and lse; the overviews)."""
    for f in dataclasses.fields(trace):
        value = getattr(trace, f.name)
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, Mapping):
            for v in value.values():
                yield from _held(v)


def _held(value: object) -> Iterator[np.ndarray]:
    """The arrays of one value of a dict field: an array, a kind's layers of scores, or its
    Summary."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, Summary):
        yield from value.arrays().values()
    elif isinstance(value, tuple):
        for layer in value:
            if isinstance(layer, LayerScores):
                yield from (layer.q, layer.k, layer.lse)


def frozen(trace: Trace) -> Trace:
    """The trace with every array read-only (the same object: it is shared from now on); a
    dict of arrays is replaced by a read-only view of itself."""
    for array in _arrays(trace):
        array.setflags(write=False)
    for f in dataclasses.fields(trace):
        value = getattr(trace, f.name)
        if isinstance(value, dict):
            object.__setattr__(trace, f.name, MappingProxyType(value))
    return trace


def size_of(trace: Trace) -> int:
    """Bytes held by the trace's arrays."""
    return sum(a.nbytes for a in _arrays(trace))


class SharedTraces:
    """A bounded, thread-safe cache of traces, computed once however many sessions ask.
    give_back runs after a trace of at least trim_from bytes was computed; `shelf` keeps those
    that took long on disk."""

    def __init__(
        self,
        budget_bytes: int,
        max_entries: int = 1024,
        trim_from: int = TRIM_FROM_BYTES,
        give_back: Callable[[], None] = give_back_memory,
        shelf: TraceShelf | None = None,
    ) -> None:
        self.budget, self.max_entries = budget_bytes, max_entries
        self.trim_from, self.give_back, self.shelf = trim_from, give_back, shelf
        self._lock = threading.RLock()  # a weak callback may run while it is held (see _forget)
        self._held: OrderedDict[Key, tuple[Callable[[], object | None], Trace, int]] = OrderedDict()
        self._held_bytes = 0
        self._running: dict[Key, Future[Trace]] = {}
        self._alive: dict[Key, tuple[Callable[[], object | None], weakref.ref[Trace]]] = {}
        self.hits = self.misses = 0

    def get(
        self,
        model: object,
        key: Key,
        compute: Callable[[], Trace],
        shelved: Callable[[], str] | None = None,
    ) -> Trace:
        """The trace of key on model: held, being computed by another session, read from the
        shelf under the name `shelved` gives (the model's weights and the input), or computed
        now (errors are raised to every caller and never kept)."""
        full = (id(model), *key)
        with self._lock:
            held = self._held.get(full)
            if held is not None and held[0]() is model:  # the same lens, not one at its address
                self._held.move_to_end(full)
                self.hits += 1
                return held[1]
            alive = self._alive.get(full)
            trace = None if alive is None or alive[0]() is not model else alive[1]()
            if trace is not None:
                self.hits += 1
                return trace
            running = self._running.get(full)
            owner = running is None
            if running is None:
                self._running[full] = running = Future()
            self.misses += owner
            self.hits += not owner
        if not owner:
            return running.result()
        try:
            trace = frozen(self._made(compute, shelved))
        except BaseException as err:
            with self._lock:
                del self._running[full]
            running.set_exception(err)
            raise
        size = size_of(trace)
        if size >= self.trim_from:
            self.give_back()  # what its forward pass freed (module docstring)
        with self._lock:
            self._keep(full, model, trace, size)
            del self._running[full]
        running.set_result(trace)
        return trace

    def _made(self, compute: Callable[[], Trace], shelved: Callable[[], str] | None) -> Trace:
        """The trace from the shelf, or computed (and shelved when it took long)."""
        name = None if self.shelf is None or shelved is None else shelved()
        found = None if name is None or self.shelf is None else self.shelf.get(name)
        if found is not None:
            return found
        started = time.perf_counter()
        trace = compute()
        if name is not None and self.shelf is not None:
            self.shelf.put(name, trace, time.perf_counter() - started)
        return trace

    def _keep(self, full: Key, model: object, trace: Trace, size: int) -> None:
        """Hold trace of `size` bytes (the lock is held), dropping the least recently used
        beyond the budget; known weakly in any case, for as long as a session holds it."""
        self._alive[full] = (_reference(model), weakref.ref(trace, self._forget(full)))
        if size > self.budget:
            return
        stale = self._held.pop(full, None)
        self._held_bytes += size - (stale[2] if stale else 0)
        self._held[full] = (_reference(model), trace, size)
        while self._held_bytes > self.budget or len(self._held) > self.max_entries:
            _, (_, _, dropped) = self._held.popitem(last=False)
            self._held_bytes -= dropped

    def _forget(self, full: Key) -> Callable[[weakref.ref[Trace]], None]:
        """A callback for when the trace of full is gone: its weak entry goes too (unless a
        newer trace of the same key took its place)."""

        def gone(ref: weakref.ref[Trace]) -> None:
            with self._lock:
                if self._alive.get(full, (None, None))[1] is ref:
                    del self._alive[full]

        return gone

    @property
    def held_bytes(self) -> int:
        return self._held_bytes


def _reference(model: object) -> Callable[[], object | None]:
    """A weak reference to the model where it allows one: an entry must not keep an evicted
    model alive, nor be mistaken for a newer model's at the same address."""
    try:
        return weakref.ref(model)
    except TypeError:
        return lambda: model
