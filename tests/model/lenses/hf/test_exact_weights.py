"""Weights rebuilt from a scores record are exact to the record (docs/python.md, "Exactness"):
each head equals a float64 softmax of the record's own q · k (its scale, cap, bias and mask)
to 1e-7, sharp heads included (scores of 40 and more, where float32's rounding of a score or of
the log-sum-exp alone moves the peak's weight by 2e-6) and T5's unscaled, biased scores."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.record.scores import LayerScores, widened
from attnlens.record.trace import Trace
from helpers.hf_zoo import zoo_folder

BOUND = 1e-7


def float64_head(layer: LayerScores, head: int) -> tuple[np.ndarray, float]:
    """(Q, K): the softmax of the layer's own scores, all in float64; and the largest score."""
    _, Q, K = layer.shape
    q = widened(layer.q[head], layer.dtype)
    k = widened(layer.k[layer.key_head(head)], layer.dtype)
    s = q @ k.T * layer.scale
    if layer.softcap is not None:
        s = layer.softcap * np.tanh(s / layer.softcap)
    if layer.bias is not None:
        at = np.arange(K)[None] - np.arange(Q)[:, None] + Q - 1
        s += layer.bias[head].astype(np.float64)[at]
    ok = layer.mask.allowed(np.arange(Q), np.arange(K))
    largest = float(np.abs(s if ok is None else s[ok]).max())
    if ok is not None:
        s[~ok] = -np.inf
    lse = np.logaddexp.reduce(s, axis=-1, keepdims=True)
    return np.exp(s - lse), largest


def worst(trace: Trace) -> tuple[float, float]:
    """The largest gap between a rebuilt head and its float64 softmax, and the largest score."""
    gap, largest = 0.0, 0.0
    for kind, layers in (trace.scores or {}).items():
        for i, layer in enumerate(layers):
            for h in range(layer.n_heads):
                want, top = float64_head(layer, h)
                got = trace.head(kind, i, h).astype(np.float64)
                gap = max(gap, float(np.abs(got - want).max()))
                largest = max(largest, top)
    return gap, largest


def words(n: int) -> str:
    return " ".join((["the", "cat", "sat", "on", "a", "mat", "and", "dog"] * n)[:n])


@functools.cache
def sharpened(name: str, factor: float) -> HFLens:
    """A zoo model whose query projections are scaled by factor: its heads' scores grow by it."""
    lens = HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    with torch.no_grad():
        for module_name, module in lens.model.named_modules():
            if module_name.endswith(("q_proj", ".q")) and hasattr(module, "weight"):
                module.weight.mul_(factor)
    return lens


SHARP = [("llama", 1.0), ("llama", 3000.0), ("mistral", 1.0), ("qwen2", 3000.0), ("gemma2", 1.0),
         ("bert", 1.0)]  # fmt: skip


@pytest.mark.parametrize(("name", "factor"), SHARP)
def test_every_head_is_the_float64_softmax_of_the_records_own_scores(
    name: str, factor: float
) -> None:
    lens = sharpened(name, factor)
    trace = lens.trace(words(lens.max_tokens // 2), record="scores")
    gap, largest = worst(trace)
    if factor > 1:
        assert largest >= 40, f"{name}: the sharpest score is only {largest:.1f}"
    assert gap <= BOUND, (name, factor, gap, largest)


@pytest.mark.parametrize("factor", [1.0, 12.0])
def test_t5s_biased_unscaled_scores_too(factor: float) -> None:
    """T5 adds a bias by distance and does not divide by √d: its scores run large."""
    lens = sharpened("t5", factor)
    n = min(lens.max_tokens, 64) // 2
    trace = lens.trace(words(n), target=words(n // 2), record="scores")
    assert set(trace.scores or {}) == {"encoder_self", "decoder_self", "cross"}
    gap, largest = worst(trace)
    if factor > 1:
        assert largest >= 40, f"t5: the sharpest score is only {largest:.1f}"
    assert gap <= BOUND, (factor, gap, largest)
