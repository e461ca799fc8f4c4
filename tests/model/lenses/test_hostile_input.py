"""Anything a student might type gets a correct record or a clear InputError, never a crash."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlens import InputError, Lens, bundled_models, load
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.record.trace import Trace

NASTY = [
    "",
    " ",
    "   ",
    "\t\n",
    "\x00",
    "a\x00b",
    "\x1b[31mred",
    "😀",
    "👩‍👩‍👧",
    "e\u0301",
    "\u202eabc",
    "שלום",
    "مرحبا",
    "a\u200bb",
    "\ufeff",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "&amp;",
    "{{7*7}}",
    "%s%n",
    "a" * 200,
    "x" * 10_000,
    "hello world",
]
texts = st.one_of(
    st.sampled_from(NASTY), st.text(max_size=80), st.text(alphabet="abc ", max_size=30)
)


@cache
def lens_for(name: str) -> Lens:
    return load(name, device="cpu")


def check_trace(tr: Trace, text: str, lens: Lens) -> None:
    assert tr.src_tokens or tr.tgt_tokens
    if isinstance(lens, Seq2SeqLens):
        read = text if lens.task is None else lens.task.read(text).text  # translate normalises
        n = lens.tokenizer.count(read)
        assert len(tr.src_tokens) == n + 1  # one position per character or word, then </s>
    for kind in tr.kinds:
        weights, mask = tr.attention(kind), tr.mask(kind)
        assert weights is not None and mask is not None
        assert np.all(np.isfinite(weights))
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        assert np.all(weights[..., ~mask] == 0)


def trace_or_refuse(lens: Lens, text: str) -> None:
    try:
        tr = lens.trace(text)
    except InputError as err:
        assert str(err) and "\n" not in str(err)
        return
    check_trace(tr, text, lens)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts)
def test_trace_tiny_model(tiny_model_dir: Path, text: str) -> None:
    trace_or_refuse(lens_for(str(tiny_model_dir)), text)


BUNDLED = [e.name for e in bundled_models() if e.source == "bundled"]


@pytest.mark.parametrize("name", BUNDLED)
@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_trace_bundled_models(name: str, text: str) -> None:
    trace_or_refuse(lens_for(name), text)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=texts,
    strategy=st.sampled_from(["greedy", "beam", "sample", "bogus"]),
    beam_size=st.integers(-2, 40),
    max_len=st.one_of(st.none(), st.integers(-5, 200)),
    temperature=st.one_of(st.floats(-1, 5), st.sampled_from([float("nan"), float("inf")])),
    top_k=st.one_of(st.none(), st.integers(-3, 100)),
    top_p=st.one_of(st.none(), st.floats(-0.5, 1.5), st.just(float("nan"))),
    seed=st.one_of(st.none(), st.integers(0, 2**31)),
)
def test_decode_settings_are_checked(
    tiny_model_dir: Path,
    text: str,
    strategy: str,
    beam_size: int,
    max_len: int | None,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    seed: int | None,
) -> None:
    lens = lens_for(str(tiny_model_dir))
    try:
        run = lens.decode(
            text,
            strategy=strategy,
            beam_size=beam_size,
            max_len=max_len,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            seed=seed,
        )
    except InputError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert run.hypotheses
    assert run.to_json()
