"""Trace.equals compares every field, a long input's scores and summaries included, and a scores
record keeps its queries' and keys' dtype through NPZ and JSON (records written before dtypes and
float64 log-sum-exps were kept still read)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pytest

from attnlens.record.scores import LayerScores, MaskRule
from attnlens.record.summary import Summary
from attnlens.record.trace import ModelInfo, Trace

H, T, D = 2, 6, 4


def _layer(rng: np.random.Generator, dtype: str = "float32") -> LayerScores:
    q, k = rng.standard_normal((H, T, D)), rng.standard_normal((H, T, D))
    if dtype == "bfloat16":  # the high half of each float32: what a bfloat16 kernel read
        q_words = (q.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        k_words = (k.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        lse = rng.standard_normal((H, T))
        return LayerScores(q_words, k_words, lse, 0.5, MaskRule(True), dtype=dtype)
    held = {"float32": np.float32, "float16": np.float16}[dtype]
    return LayerScores(q.astype(held), k.astype(held), rng.standard_normal((H, T)), 0.5,
                       MaskRule(True), bias=rng.standard_normal((H, 2 * T - 1)).astype(np.float32),
                       dtype=dtype)  # fmt: skip


def _summary(rng: np.random.Generator) -> Summary:
    stat = lambda: rng.random((2, H)).astype(np.float32)  # noqa: E731
    blocks = rng.random((2, H, 3, 3)).astype(np.float16)
    edges = np.array([0, 2, 4, 6])
    return Summary(blocks, blocks.copy(), edges, edges.copy(), stat(), stat(), stat(),
                   np.full((2, H), np.nan, np.float32), stat(), stat(), stat())  # fmt: skip


def scores_trace(dtype: str = "float32") -> Trace:
    rng = np.random.default_rng(7)
    tokens = tuple(f"w{i}" for i in range(T))
    return Trace(
        model=ModelInfo("m", "decoder", 2, H, 8, kv_heads=H),
        src_tokens=(),
        tgt_tokens=tokens,
        encoder_self=None,
        decoder_self=None,
        cross=None,
        encoder_self_mask=None,
        decoder_self_mask=None,
        cross_mask=None,
        positional_encoding=None,
        tgt_logprobs=rng.standard_normal(T).astype(np.float32),
        warnings=("a warning",),
        positional_scheme="rotary",
        tgt_shown=tokens,
        scores={"decoder_self": (_layer(rng, dtype), _layer(rng, dtype))},
        summaries={"decoder_self": _summary(rng)},
    )


def _changed(trace: Trace, name: str) -> Trace:
    """The trace with one field changed, whatever its kind."""
    value: Any = getattr(trace, name)
    if name == "scores":
        first, second = value["decoder_self"]
        tripled = dataclasses.replace(first, q=first.q * 3)
        value = {"decoder_self": (tripled, second)}
    elif name == "summaries":
        s = value["decoder_self"]
        value = {"decoder_self": dataclasses.replace(s, induction=s.entropy.copy())}
    elif isinstance(value, np.ndarray):
        value = value + 1
    elif name == "model":
        value = dataclasses.replace(value, d_model=value.d_model + 1)
    elif name in ("src_tokens", "tgt_tokens", "warnings", "src_shown", "tgt_shown"):
        value = (*(value or ()), "x")
    elif name == "positional_scheme":
        value = "learned"
    elif name == "src_segments":
        value = (0,)
    else:  # an array field that is None here, or the layer masks
        value = {"decoder_self": np.ones((2, T, T), bool)} if name == "layer_masks" else np.ones(1)
    return dataclasses.replace(trace, **{name: value})


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Trace)])
def test_equals_notices_a_change_in_any_field(name: str) -> None:
    trace = scores_trace()
    assert trace.equals(scores_trace())
    assert not trace.equals(_changed(trace, name)), name
    assert not _changed(trace, name).equals(trace), name


def test_equals_notices_one_layers_queries_tripled() -> None:
    """The check issue 48 asked for: a changed q alone makes two records differ."""
    trace = scores_trace()
    assert not trace.equals(_changed(trace, "scores"))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_queries_and_keys_keep_their_dtype_through_npz_and_json(dtype: str) -> None:
    trace = scores_trace(dtype)
    for back in (Trace.from_npz(trace.to_npz()), Trace.from_json(trace.to_json())):
        assert back.equals(trace)
        layer = (back.scores or {})["decoder_self"][0]
        assert layer.dtype == dtype and layer.q.dtype == layer.k.dtype
        assert layer.lse.dtype == np.float64
        assert np.array_equal(back.head("decoder_self", 0, 1), trace.head("decoder_self", 0, 1))


def test_a_bfloat16_layer_rebuilds_the_weights_of_its_float32_values() -> None:
    """bfloat16 words are the high half of a float32: the head is the float64 softmax of
    those values, and its row sums are 1 where lse is theirs."""
    trace = scores_trace("bfloat16")
    layer = (trace.scores or {})["decoder_self"][0]
    q = (layer.q.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    k = (layer.k.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    s = q[1] @ k[layer.key_head(1)].T * layer.scale
    s[np.triu_indices(T, 1)] = -np.inf
    lse = np.logaddexp.reduce(s, axis=-1)
    exact = dataclasses.replace(layer, lse=np.stack([lse, lse]))
    assert np.abs(exact.weights(1) - np.exp(s - lse[:, None])).max() <= 1e-7


def test_a_record_written_before_dtypes_reads_as_float32_with_its_lse() -> None:
    """An NPZ meta without `dtype`, and lse stored as float32, as every record before."""
    trace = scores_trace()
    data = json.loads(trace.to_json())
    for layer in data["scores"]["decoder_self"]:
        layer.pop("dtype", None)
        layer["lse"] = np.asarray(layer["lse"], np.float32).tolist()
    back = Trace.from_dict(data)
    layer = (back.scores or {})["decoder_self"][0]
    assert layer.dtype == "float32" and layer.q.dtype == np.float32
    assert np.array_equal(layer.lse, np.asarray(data["scores"]["decoder_self"][0]["lse"]))


def test_a_layer_whose_arrays_do_not_hold_its_dtype_is_refused() -> None:
    layer = _layer(np.random.default_rng(0))
    with pytest.raises(ValueError, match="q is float32, but a layer kept as bfloat16 holds uint16"):
        dataclasses.replace(layer, dtype="bfloat16")
    with pytest.raises(ValueError, match="dtype must be one of"):
        dataclasses.replace(layer, dtype="int8")
