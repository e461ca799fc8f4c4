"""Synthetic Trace records for the figure tests: no model, no torch, exact known patterns."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from model.trace import ModelInfo, Trace

MakeTrace = Callable[..., Trace]


def sinusoid(P: int, d_model: int) -> np.ndarray:
    """§3.5 positional encoding, (P, d_model)."""
    pos = np.arange(P)[:, None]
    div = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))
    pe = np.zeros((P, d_model))
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div[: d_model // 2])
    return pe.astype(np.float32)


def random_attention(L: int, H: int, mask: np.ndarray, seed: int) -> np.ndarray:
    """Rows that sum to 1 over the allowed keys, exactly 0 elsewhere: (L, H, Q, K)."""
    logits = np.random.default_rng(seed).normal(size=(L, H, *mask.shape))
    e = np.where(mask, np.exp(logits), 0.0)
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def make_trace(
    src: Sequence[str] = ("a", "b", "a", "</s>"),
    tgt: Sequence[str] = ("<s>", "x", "y"),
    L: int = 2,
    H: int = 3,
    seed: int = 0,
    d_model: int = 8,
    **arrays: np.ndarray | None,
) -> Trace:
    """An encoder-decoder Trace with random attention; keyword arrays replace any field."""
    S, T = len(src), len(tgt)
    masks = {
        "encoder_self": np.ones((S, S), dtype=bool),
        "decoder_self": np.tril(np.ones((T, T), dtype=bool)),
        "cross": np.ones((T, S), dtype=bool),
    }
    fields: dict[str, np.ndarray | None] = {f"{k}_mask": m for k, m in masks.items()}
    for i, (k, m) in enumerate(masks.items()):
        fields[k] = random_attention(L, H, m, seed + i)
    fields["positional_encoding"] = sinusoid(max(S, T), d_model)
    fields["tgt_logprobs"] = np.full(T, -0.5, dtype=np.float32)
    fields.update(arrays)
    info = ModelInfo("synthetic", "encoder-decoder", L, H, d_model)
    return Trace(model=info, src_tokens=tuple(src), tgt_tokens=tuple(tgt), **fields)  # type: ignore[arg-type]


def pattern(L: int, H: int, T: int, offset: int) -> np.ndarray:
    """Every head attends from query q to key q - offset (clipped at 0): (L, H, T, T)."""
    w = np.zeros((T, T), dtype=np.float32)
    w[np.arange(T), np.clip(np.arange(T) - offset, 0, None)] = 1.0
    return np.broadcast_to(w, (L, H, T, T)).copy()


MARKUP = ("<b>x</b>", "<img src=x onerror=alert(1)>", "a&b")


@pytest.fixture
def trace() -> Trace:
    return make_trace()


@pytest.fixture
def markup_trace() -> Trace:
    """Tokens that are HTML: they must show literally, never be rendered."""
    return make_trace(src=(*MARKUP, "</s>"), tgt=("<s>", *MARKUP))


class Synth:
    """The helpers above, handed to tests as a fixture (conftest modules are not importable)."""

    make_trace = staticmethod(make_trace)
    pattern = staticmethod(pattern)
    sinusoid = staticmethod(sinusoid)
    markup = MARKUP


@pytest.fixture
def synth() -> type[Synth]:
    return Synth
