"""A decoding run read back with teacher forcing: same score, same attention, step by step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlens import load
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.record.decode import DecodeRun

TEXTS = ("hello world", "attention", "abc xyz")


@pytest.fixture(scope="module")
def lens() -> Seq2SeqLens:
    loaded = load("reverse", device="cpu")
    assert isinstance(loaded, Seq2SeqLens)
    return loaded


def runs(lens: Seq2SeqLens, text: str) -> list[DecodeRun]:
    return [
        lens.decode(text),
        lens.decode(text, strategy="beam", beam_size=4),
        lens.decode(text, strategy="beam", beam_size=3, length_penalty=1.0),
        lens.decode(text, strategy="sample", seed=4, temperature=1.2),
        lens.decode(text, strategy="sample", seed=9, top_k=3, top_p=0.8),
        lens.decode(text, strategy="beam", beam_size=2, force={2: "q"}),
    ]


@pytest.mark.parametrize("text", TEXTS)
def test_score_equals_the_teacher_forced_sum(lens: Seq2SeqLens, text: str) -> None:
    for run in runs(lens, text):
        assert run.hypotheses[0].finished, run.params  # ended with the end token
        tr = lens.trace(text, target=run.output_text)
        assert tr.tgt_tokens[1:] + ("</s>",) == run.output_tokens  # the text reproduces tokens
        assert tr.tgt_logprobs is not None
        assert math.isclose(float(tr.tgt_logprobs.sum()), run.score, abs_tol=1e-4), run.params


@pytest.mark.parametrize("text", TEXTS)
def test_step_attention_is_the_row_of_the_full_teacher_forced_trace(
    lens: Seq2SeqLens, text: str
) -> None:
    for run in runs(lens, text):
        tr = lens.trace(text, target=run.output_text)
        assert tr.decoder_self is not None and tr.cross is not None
        path = run.path(run.best.step, run.best.beam)
        for t, beam in enumerate(path):
            row = 0 if t == 0 else path[t - 1].beam  # the live beam this step extended
            assert beam.parent == (None if t == 0 else row)
            step = run.steps[t]
            assert step.cross_attention is not None
            np.testing.assert_allclose(
                step.decoder_self_attention[:, :, row], tr.decoder_self[:, :, t, : t + 1], atol=1e-5
            )
            np.testing.assert_allclose(
                step.cross_attention[:, :, row], tr.cross[:, :, t], atol=1e-5
            )
            assert math.isclose(beam.logprob, float(tr.tgt_logprobs[t]), abs_tol=1e-5)  # type: ignore[index]


def test_the_trained_model_reverses_with_every_strategy(lens: Seq2SeqLens) -> None:
    assert lens.decode("hello world").output_text == "dlrow olleh"
    assert lens.decode("hello world", strategy="beam", beam_size=4).output_text == "dlrow olleh"
    beam = lens.decode("hello world", strategy="beam", beam_size=4)
    assert [h.score for h in beam.hypotheses] == sorted(
        (h.score for h in beam.hypotheses), reverse=True
    )


def test_trace_without_a_target_follows_greedy_decoding(lens: Seq2SeqLens) -> None:
    tr = lens.trace("hello world")
    assert tr.tgt_tokens[1:] + ("</s>",) == lens.decode("hello world").output_tokens
