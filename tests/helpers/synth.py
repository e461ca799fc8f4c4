"""Synthetic Trace and DecodeRun records for the figure tests: no model, no torch, exact known
patterns."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from attnlens.record.decode import BeamStep, Candidate, DecodeRun, Hypothesis, StepRecord
from attnlens.record.trace import ModelInfo, Trace

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
        fields[k] = arrays[k] if k in arrays else random_attention(L, H, m, seed + i)
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


def _step(step: int, beams: list[tuple], rows: list[list[tuple[str, float]]]) -> StepRecord:
    live = len(rows)
    return StepRecord(
        step=step,
        beams=tuple(BeamStep(*b) for b in beams),
        candidates=tuple(tuple(Candidate(t, p) for t, p in row) for row in rows),
        cross_attention=np.full((1, 1, live, 2), 0.5, dtype=np.float32),
        decoder_self_attention=np.full((1, 1, live, step + 1), 1 / (step + 1), dtype=np.float32),
    )


def beam_run() -> DecodeRun:
    """Two steps of beam size 2: the best hypothesis is 'a </s>', finished at step 1, beam 1."""
    steps = (
        _step(
            0,
            [(0, None, "a", -0.1, -0.1, "alive"), (1, None, "<b>x</b>", -1.0, -1.0, "alive"),
             (2, None, "c", -3.0, -3.0, "pruned")],
            [[("a", 0.9), ("<b>x</b>", 0.37), ("c", 0.05)]],
        ),
        _step(
            1,
            [(0, 1, "d", -0.1, -1.1, "alive"), (1, 0, "</s>", -0.2, -0.3, "finished"),
             (2, 0, "e", -2.0, -2.1, "pruned")],
            [[("</s>", 0.82), ("e", 0.13)], [("d", 0.9), ("a", 0.05)]],
        ),
    )  # fmt: skip
    hyps = (
        Hypothesis(("a", "</s>"), "a", -0.3, True, -0.3, 1, 1),
        Hypothesis(("<b>x</b>", "d"), "<b>x</b>d", -1.1, False, -1.1, 1, 0),
    )
    return DecodeRun("beam", {"beam_size": 2}, ("p", "q"), hyps, steps)


def greedy_run() -> DecodeRun:
    """Greedy: 'a' then 'e', not finished."""
    steps = (
        _step(0, [(0, None, "a", -0.1, -0.1, "alive")], [[("a", 0.9), ("c", 0.05)]]),
        _step(1, [(0, 0, "e", -0.5, -0.6, "alive")], [[("e", 0.6), ("</s>", 0.3)]]),
    )
    hyps = (Hypothesis(("a", "e"), "ae", -0.6, False, -0.6, 1, 0),)
    return DecodeRun("greedy", {}, ("p", "q"), hyps, steps)


def beam_run_past_the_output() -> DecodeRun:
    """beam_run with one more step: the output ('a </s>') finished at step 1, and the search
    went on at step 2 with the losing beam ('<b>x</b> d') alone."""
    base = beam_run()
    step2 = _step(
        2,
        [(0, 0, "e", -0.4, -1.5, "alive"), (1, 0, "f", -2.0, -3.1, "pruned")],
        [[("e", 0.67), ("f", 0.14)]],
    )
    return DecodeRun("beam", {"beam_size": 2}, ("p", "q"), base.hypotheses, (*base.steps, step2))
