"""A trace that keeps scores instead of weights (docs/python.md, "Long inputs"): on our own
models from each layer's Q and K; the budget counts what is kept and a refusal names the longest
input that fits; `auto` keeps the weights where they fit and the scores past them."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import torch

from attnlens.model import budget
from attnlens.model.budget import RecordTooLargeError
from attnlens.model.lenses import summaries
from attnlens.model.lenses.hf import recording, tracing
from attnlens.model.lenses.hf.capture import CapturedHeads, HeldHeads
from attnlens.model.lenses.hf.heads import HeadsError
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.recording import Widths, scores_bytes, weights_bytes
from attnlens.model.lenses.registry import load
from attnlens.record.errors import InputError
from attnlens.record.trace import Trace
from helpers.hf_zoo import zoo_folder
from helpers.parts import runs


@functools.cache
def zoo(name: str) -> HFLens:
    return HFLens(zoo_folder(name), torch.device("cpu"), name=name)


def words(n: int) -> str:
    return " ".join((["the", "cat", "sat", "on", "a", "mat"] * n)[:n])


@pytest.mark.parametrize("name", ["reverse", "translate", "lm"])
def test_our_models_keep_each_layers_q_and_k_and_recompute_their_weights(name: str) -> None:
    lens = load(name, "cpu")
    weights, scores = lens.trace(lens.example), lens.trace(lens.example, record="scores")
    assert scores.scores is not None and scores.kinds == weights.kinds
    for kind in weights.kinds:
        assert getattr(scores, kind) is None
        assert np.abs(scores.attention(kind) - weights.attention(kind)).max() <= 1e-5
        assert np.array_equal(scores.mask(kind), weights.mask(kind))
    back = Trace.from_npz(scores.to_npz())
    assert np.array_equal(back.head("decoder_self", 0, 1), scores.head("decoder_self", 0, 1))
    assert lens.trace(lens.example, record="auto").equals(weights)  # our weights always fit


def test_a_record_mode_that_does_not_exist_is_refused() -> None:
    with pytest.raises(
        InputError, match="record must be one of weights, scores, auto, got 'dense'"
    ):
        load("reverse", "cpu").trace("abc", record="dense")  # type: ignore[arg-type]


def _tokens(lens: HFLens, n: int) -> str:
    """A text the zoo's tokenizer reads as n tokens (the start token counted)."""
    for m in range(n, 0, -1):
        text = words(m)
        try:
            if len(runs(lens).token_ids(text)) == n:
                return text
        except InputError:  # longer than the model takes
            continue
    raise AssertionError(f"no text of {n} tokens")


@pytest.fixture
def small_overview(monkeypatch: pytest.MonkeyPatch) -> None:
    """Overviews of 4 × 4 blocks: at the zoo's few dozen tokens a 128 × 128 overview is the
    whole map again, bigger than the weights; at the lengths scores are for, it is not."""
    monkeypatch.setattr(summaries, "OVERVIEW", 4)


@pytest.mark.usefixtures("small_overview")
def test_auto_keeps_weights_that_fit_and_scores_past_them(monkeypatch: pytest.MonkeyPatch) -> None:
    llama = zoo("llama")
    budget = weights_bytes(llama.info, 0, 32)  # the weights of 32 tokens, and not one more
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", str(budget / 2**20))
    short, long = _tokens(llama, 8), _tokens(llama, 35)
    assert llama.trace(short, record="auto").scores is None
    kept = llama.trace(long, record="auto")
    assert kept.scores is not None and kept.decoder_self is None
    with pytest.raises(RecordTooLargeError, match="the longest input that fits is 32 tokens"):
        llama.trace(long, record="weights")
    llama.trace(_tokens(llama, 32), record="weights")  # the longest that fits, fits
    with pytest.raises(RecordTooLargeError):
        llama.trace(_tokens(llama, 33), record="weights")


@pytest.mark.usefixtures("small_overview")
def test_what_cannot_be_kept_as_scores_is_refused_with_why_when_its_weights_do_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bloom = zoo("bloom")
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", str(weights_bytes(bloom.info, 0, 40) / 2**20))
    with pytest.raises(RecordTooLargeError, match="not as scores: its attention code") as refused:
        bloom.trace(_tokens(bloom, 44), record="scores")
    assert "record='scores'" not in str(refused.value)  # no advice that cannot work


@pytest.mark.usefixtures("small_overview")
def test_a_record_of_scores_takes_a_quarter_of_the_memory_available_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without ATTNLENS_MAX_RECORD_MB, scores may take a quarter of what the machine has
    available (at least 512 MB), and a refusal names what fits on this machine now."""
    llama = zoo("llama")
    sized = scores_bytes(llama.info, Widths.of(llama.model.config, llama.info), 0, 30)
    monkeypatch.delenv("ATTNLENS_MAX_RECORD_MB", raising=False)
    monkeypatch.setattr(budget, "DEFAULT_MB", sized / 4 / 2**20)  # a floor below it
    monkeypatch.setattr(budget, "available_bytes", lambda: 4 * sized)
    assert llama.trace(_tokens(llama, 30), record="scores").scores is not None
    with pytest.raises(RecordTooLargeError) as refused:
        llama.trace(_tokens(llama, 35), record="scores")
    message = str(refused.value)
    assert "the longest input that fits on this machine now is 30 tokens" in message
    assert "a quarter of the" in message and "this machine has available" in message
    monkeypatch.setattr(budget, "available_bytes", lambda: 4 * sized - 4)  # a byte short
    with pytest.raises(RecordTooLargeError, match="on this machine now is 29 tokens"):
        llama.trace(_tokens(llama, 30), record="scores")


def test_the_memory_available_is_the_least_the_system_and_a_container_allow(
    tmp_path: Path,
) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 100 kB\nMemAvailable:  4096 kB\n")
    assert budget.available_bytes(tmp_path) == 4096 * 1024
    group = tmp_path / "sys/fs/cgroup"
    group.mkdir(parents=True)
    (group / "memory.max").write_text("3000000\n")
    (group / "memory.current").write_text("1000000\n")
    assert budget.available_bytes(tmp_path) == 2_000_000
    (group / "memory.max").write_text("max\n")  # no container limit
    assert budget.available_bytes(tmp_path) == 4096 * 1024
    assert budget.available_bytes(tmp_path / "nowhere") is None


def test_a_set_record_budget_is_the_limit_of_scores_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "available_bytes", lambda: 2**40)
    assert budget.scores_limit({"ATTNLENS_MAX_RECORD_MB": "64"}) == budget.Limit(
        64 * 2**20, "ATTNLENS_MAX_RECORD_MB"
    )
    assert budget.scores_limit({}).bytes == 2**38
    monkeypatch.setattr(budget, "available_bytes", lambda: None)  # unreadable: the default
    assert budget.scores_limit({}).bytes == 512 * 2**20


@pytest.mark.parametrize("name", ["llama", "bart"])
def test_the_scores_budget_counts_what_the_capture_holds_until_the_forward_ends(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Grouped-query Llama and an encoder-decoder: the budget is, beside the summaries, every
    layer's kept queries, keys and float64 log-sum-exps and, where the calls cannot take the
    norms themselves, the values and heads' outputs the capture holds with them until the
    forward pass ends (the norms' inputs), to the byte. Where they can (these models), each
    layer holds its norms alone, the very numbers taken from what it would have held."""
    lens = zoo(name)
    taken = _captured(lens)
    assert all(isinstance(layer.heads, tuple) for layer in taken)
    monkeypatch.setattr(tracing, "InCall", mock.Mock(side_effect=HeadsError("told apart")))
    layers = _captured(lens)
    assert all(isinstance(layer.heads, HeldHeads) for layer in layers)
    (kind,) = {"llama": ("decoder_self",), "bart": ("encoder_self",)}[name]
    first = lens.info.shape(kind)[0]  # the first kind's layers (bart: the encoder's)
    with torch.inference_mode():
        held = {kind: [x.heads for x in layers[:first]]}
        norms = tracing.trace_norms(lens.model, lens.info, held, {})  # type: ignore[dict-item]
    assert norms[0] is not None
    carried = np.stack([layer.heads[0].numpy() for layer in taken[:first]])  # type: ignore[index]
    assert np.array_equal(norms[0][kind].carried, carried)
    widths = Widths.of(lens.model.config, lens.info)
    held = sum(
        layer.scores.q.nbytes + layer.scores.k.nbytes + 8 * layer.scores.lse.size
        + widths.item * (layer.heads.values.numel() + layer.heads.output.numel())
        for layer in layers
        if isinstance(layer.heads, HeldHeads)
    )  # fmt: skip
    values = sum(
        widths.item * layer.heads.values.numel()
        for layer in layers
        if isinstance(layer.heads, HeldHeads)
    )
    S, T = _sizes(lens)
    L, H = lens.info.shape("decoder_self")
    summaries = recording._overview(L * H, T, T) + recording._overview(L * H, T, S)
    if S:
        eL, eH = lens.info.shape("encoder_self")
        summaries += recording._overview(eL * eH, S, S)
    assert values > 0 and scores_bytes(lens.info, widths, S, T) == held + summaries


def _sizes(lens: Any) -> tuple[int, int]:
    return (9, 6) if lens.info.architecture == "encoder-decoder" else (0, 11)


def _captured(lens: Any) -> list[CapturedHeads]:
    """Every layer's CapturedHeads of one forward pass of the trace's (encoder's first)."""
    S, T = _sizes(lens)
    ids = lambda n: torch.arange(4, 4 + n).unsqueeze(0)  # noqa: E731  # (1, n)
    if S:
        inputs = {"input_ids": ids(S), "decoder_input_ids": ids(T), "use_cache": False}
        fields = ("encoder_attentions", "decoder_attentions", "cross_attentions")
    else:
        inputs, fields = {"input_ids": ids(T), "use_cache": False}, ("attentions",)
    with torch.inference_mode():  # as a trace runs it
        out = tracing.forward(lens.runner, True, **inputs)
    layers = [layer for field in fields for layer in getattr(out, field)]
    assert layers and all(isinstance(layer, CapturedHeads) for layer in layers)
    return layers
