"""Traces shared between sessions: computed once, read-only, bounded, never another model's."""

from __future__ import annotations

import dataclasses
import gc
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import attnlens
from attnlens.app.server.trace_cache import SharedTraces, size_of
from attnlens.record.trace import Trace


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(tiny_model_dir))


def counting(lens: attnlens.Lens, text: str, calls: list[str]) -> object:
    def compute() -> Trace:
        calls.append(text)
        return lens.trace(text)

    return compute


def test_the_same_input_is_traced_once_and_equals_a_fresh_trace(lens: attnlens.Lens) -> None:
    cache, calls = SharedTraces(2**30), []
    first = cache.get(lens, ("bad",), counting(lens, "bad", calls))
    again = cache.get(lens, ("bad",), counting(lens, "bad", calls))
    assert calls == ["bad"] and again is first
    fresh = lens.trace("bad")
    assert first.src_tokens == fresh.src_tokens
    for kind in first.kinds:
        np.testing.assert_array_equal(first.attention(kind), fresh.attention(kind))


def test_a_shared_trace_cannot_be_changed(lens: attnlens.Lens) -> None:
    tr = SharedTraces(2**30).get(lens, ("cab",), lambda: lens.trace("cab"))
    assert tr.cross is not None
    with pytest.raises(ValueError, match="read-only"):
        tr.cross[0, 0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        tr.encoder_self_mask[...] = False  # type: ignore[index]


def test_a_shared_traces_per_layer_masks_cannot_be_changed(lens: attnlens.Lens) -> None:
    plain = lens.trace("cab")
    assert plain.encoder_self is not None
    L, _, S, _ = plain.encoder_self.shape
    mask = np.ones((L, S, S), dtype=bool)
    masked = dataclasses.replace(plain, layer_masks={"encoder_self": mask})
    tr = SharedTraces(2**30).get(lens, ("cab", "masked"), lambda: masked)
    assert tr.layer_masks is not None
    with pytest.raises(ValueError, match="read-only"):
        tr.layer_masks["encoder_self"][0, 0, 0] = False
    with pytest.raises(TypeError):
        tr.layer_masks["cross"] = mask  # type: ignore[index]
    assert size_of(tr) == size_of(plain) + mask.nbytes
    np.testing.assert_array_equal(tr.mask("encoder_self", 0), mask[0])  # still read as before


def test_sessions_asking_at_once_share_one_model_call(lens: attnlens.Lens) -> None:
    cache, calls, gate = SharedTraces(2**30), [], threading.Event()

    def slow() -> Trace:
        calls.append("dab")
        gate.wait(10)
        return lens.trace("dab")

    got: list[Trace] = []
    threads = [
        threading.Thread(target=lambda: got.append(cache.get(lens, ("dab",), slow)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)  # all four are waiting on the one computation
    gate.set()
    for t in threads:
        t.join(10)
    assert calls == ["dab"] and len(got) == 4 and all(g is got[0] for g in got)
    assert cache.misses == 1 and cache.hits == 3


def test_errors_reach_the_caller_and_are_not_kept(lens: attnlens.Lens) -> None:
    cache, calls = SharedTraces(2**30), []
    for _ in range(2):
        with pytest.raises(attnlens.InputError, match="empty"):
            cache.get(lens, ("",), counting(lens, "", calls))
    assert calls == ["", ""]


def test_another_model_never_gets_this_ones_trace(
    tiny_model_dir: Path, lens: attnlens.Lens
) -> None:
    other = attnlens.load(str(tiny_model_dir))  # same name, another object
    cache = SharedTraces(2**30)
    mine = cache.get(lens, ("ab",), lambda: lens.trace("ab"))
    theirs = cache.get(other, ("ab",), lambda: other.trace("ab"))
    assert mine is not theirs


def test_memory_stays_within_the_budget_least_recent_first(lens: attnlens.Lens) -> None:
    one = size_of(lens.trace("abc"))
    cache, calls = SharedTraces(int(2.5 * one)), []
    for text in ("abc", "bca", "cab"):  # the same size each
        cache.get(lens, (text,), counting(lens, text, calls))
    assert cache.held_bytes <= 2.5 * one
    cache.get(lens, ("cab",), counting(lens, "cab", calls))  # held
    cache.get(lens, ("abc",), counting(lens, "abc", calls))  # dropped first: traced again
    assert calls == ["abc", "bca", "cab", "abc"]


def test_two_sessions_on_the_same_text_share_one_model_call(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnlens.model.lenses.seq2seq import Seq2SeqLens
    from helpers.apptest import open_on

    calls: list[str] = []
    original = Seq2SeqLens.trace

    def counted(self: Seq2SeqLens, text: str, target: str | None = None, **kw: Any) -> Trace:
        calls.append(text)
        return original(self, text, target, **kw)

    monkeypatch.setattr(Seq2SeqLens, "trace", counted)
    first = open_on(tiny_model_dir, "explore", text="hgfe dc")  # a text no other test types
    second = open_on(tiny_model_dir, "explore", text="hgfe dc")
    assert not first.exception and not second.exception
    assert calls.count("hgfe dc") == 1
    assert first.get("plotly_chart")[0].proto.spec == second.get("plotly_chart")[0].proto.spec


def test_a_trace_over_the_budget_is_shared_while_held_and_gone_once_let_go(
    lens: attnlens.Lens,
) -> None:
    cache, calls = SharedTraces(budget_bytes=1), []
    first = cache.get(lens, ("ab",), counting(lens, "ab", calls))
    again = cache.get(lens, ("ab",), counting(lens, "ab", calls))
    assert again is first and calls == ["ab"] and cache.held_bytes == 0
    alive = weakref.ref(first)
    del first, again
    gc.collect()
    assert alive() is None  # the cache did not keep it
    cache.get(lens, ("ab",), counting(lens, "ab", calls))
    assert calls == ["ab", "ab"]


def test_freed_memory_is_given_back_after_a_large_trace_only(lens: attnlens.Lens) -> None:
    """The allocator's slack of a long input's forward pass goes back to the system once its
    trace is made; a short trace, or one found in the cache, pays nothing for it."""
    small, large = lens.trace("ab"), lens.trace("abcdefgh")
    assert size_of(small) < size_of(large)
    trims: list[int] = []
    cache = SharedTraces(2**30, trim_from=size_of(large), give_back=lambda: trims.append(1))
    cache.get(lens, ("ab",), lambda: lens.trace("ab"))
    assert trims == []
    cache.get(lens, ("abcdefgh",), lambda: lens.trace("abcdefgh"))
    assert trims == [1]
    cache.get(lens, ("abcdefgh",), lambda: lens.trace("abcdefgh"))  # held: not made again
    assert trims == [1]
