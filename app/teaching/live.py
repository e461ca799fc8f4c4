"""The records one input gives, each computed once and shared by every slide that needs it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.parts import Projections
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.example import Example
from attnlens.record.projections import HeadProjections
from attnlens.record.trace import Kind, Trace

T = TypeVar("T")
BEAM_SIZE = 4
MAX_LEN = 40  # tokens a lecture's decoding runs write at most


class LiveInput:
    """A model and an input; its trace, reference and decoding runs on demand, each computed
    once (records are immutable values, so one LiveInput may serve many sessions)."""

    def __init__(self, lens: Lens, text: str, target: str | None = None) -> None:
        self.lens, self.text, self.target = lens, text, target
        self._done: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def _once(self, key: Any, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._done:
                return self._done[key]  # type: ignore[no-any-return]
        value = compute()  # outside the lock: another input's work need not wait
        with self._lock:
            return self._done.setdefault(key, value)  # type: ignore[no-any-return]

    @property
    def trace(self) -> Trace:
        return self._once("trace", lambda: self.lens.trace(self.text, self.target))

    def reference(self) -> tuple[int, ...] | None:
        """The true source of each output token, when the task knows it and the decoder was
        given the right output."""

        def compute() -> tuple[int, ...] | None:
            task = self.lens.capabilities.task
            example: Example | None = None if task is None else task.reference(self.text)
            if example is None or "cross" not in self.trace.kinds:
                return None
            if self.lens.text_of(self.trace.tgt_tokens[1:]) != example.target:
                return None
            return tuple(example.alignment)

        return self._once("reference", compute)

    def decode(self, strategy: str, **settings: Any) -> DecodeRun:
        """A decoding run of at most MAX_LEN tokens (a slide shows a sentence, not a page)."""
        key = ("decode", strategy, tuple(sorted(settings.items())))

        def compute() -> DecodeRun:
            room = self.lens.decode_plan(self.text).limits.max_len
            wanted = {"max_len": min(MAX_LEN, room), **settings}
            return self.lens.decode(self.text, strategy, **wanted)  # type: ignore[arg-type]

        return self._once(key, compute)

    def greedy(self) -> DecodeRun:
        return self.decode("greedy")

    def beam(self, beam_size: int = BEAM_SIZE) -> DecodeRun:
        return self.decode("beam", beam_size=beam_size)

    def projections(self, kind: Kind, layer: int, head: int) -> HeadProjections:
        key = ("projections", kind, layer, head)
        return self._once(key, lambda: self._projections().head_projections(
            self.trace, kind, layer, head))  # fmt: skip

    def _projections(self) -> Projections:
        """The model's step-by-step part; an InputError (the slide's note) where it has none."""
        can = self.lens.capabilities
        if can.projections is None:
            raise InputError(can.reason("projections"))
        return can.projections

    def carried(self, kind: Kind) -> np.ndarray:
        """(L, H, K) ‖f_h(xⱼ)‖ of the trace's keys, what each key gives each head, as the trace
        recorded them; an InputError (the slide's note) where it holds none, saying why."""
        try:
            return self.trace.head_norms(kind).carried
        except ValueError as why:
            raise InputError(str(why)) from None

    def other(self, text: str) -> Trace:
        """Another input's trace on the same model (a batch partner for padding)."""
        return self._once(("other", text), lambda: self.lens.trace(text))
