"""Input erasure (Abnar & Zuidema): each erased token's drop in log-probability, checked
against an independent teacher-forced trace of the text with that token unknown."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.model.experiments.explanation import erasure_case, erasure_cases
from attnlens.model.lenses.lens import Lens
from attnlens.record.errors import InputError

UNKNOWN = "Z"  # outside both tiny vocabularies: read as <unk>, which erasure substitutes


def test_decoder_erasure_equals_tracing_the_text_with_that_token_unknown(hand_lm: Lens) -> None:
    text = "abcab.ca"
    case = erasure_case(hand_lm, text)
    assert case.input_tokens[0] == "<s>" and np.isnan(case.erasure[0])  # markers never erased
    full = hand_lm.trace(text, case.output_token).tgt_logprobs
    assert full is not None and case.logprob == pytest.approx(float(full[len(text)]), abs=1e-5)
    for k in range(len(text)):
        erased = text[:k] + UNKNOWN + text[k + 1 :]
        lp = hand_lm.trace(erased, case.output_token).tgt_logprobs
        assert lp is not None
        assert case.erasure[k + 1] == pytest.approx(case.logprob - float(lp[len(text)]), abs=1e-5)


def test_seq2seq_erasure_equals_tracing_the_source_with_that_token_unknown(
    hand_reverse: Lens,
) -> None:
    text = "abc12"
    output = hand_reverse.decode(text).output_text
    case = erasure_case(hand_reverse, text, output=1)
    assert case.seq2seq and case.output_position == 1 and np.isnan(case.erasure[-1])  # </s>
    for k in range(len(text)):
        erased = text[:k] + UNKNOWN + text[k + 1 :]
        lp = hand_reverse.trace(erased, output).tgt_logprobs
        assert lp is not None
        assert case.erasure[k] == pytest.approx(case.logprob - float(lp[1]), abs=1e-5)


def test_held_out_cases_are_drawn_from_the_seed(hand_reverse: Lens) -> None:
    first, again = erasure_cases(hand_reverse, 4, seed=2), erasure_cases(hand_reverse, 4, seed=2)
    assert [c.input_tokens for c in first] == [c.input_tokens for c in again]
    assert all(
        np.array_equal(a.erasure, b.erasure, equal_nan=True)
        for a, b in zip(first, again, strict=True)
    )


def test_an_output_position_past_the_output_is_refused(hand_reverse: Lens) -> None:
    with pytest.raises(InputError, match="does not exist"):
        erasure_case(hand_reverse, "abc", output=99)


def test_a_decoder_explains_the_token_after_the_text_only(hand_lm: Lens) -> None:
    with pytest.raises(InputError, match="after the text"):
        erasure_case(hand_lm, "abc", output=0)
