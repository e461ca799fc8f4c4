"""Predict, then reveal: a question only where its answer is sharp, multiple choice, one why."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.app.teaching.questions import (
    SHARP,
    NoQuestion,
    Question,
    beam_question,
    greedy_question,
    head_question,
    where_question,
)
from attnlens.record.decode import Candidate
from helpers import synth

SRC = ("the", "cat", "sees", "a", "house", "</s>")


def uniform(L: int, H: int, Q: int, K: int) -> np.ndarray:
    return np.full((L, H, Q, K), 1.0 / K, dtype=np.float32)


def with_row(
    weights: np.ndarray, layer: int, head: int, row: int, key: int, w: float
) -> np.ndarray:
    """weights with one row putting w on key and the rest spread evenly."""
    out = weights.copy()
    K = out.shape[-1]
    out[layer, head, row] = (1 - w) / (K - 1)
    out[layer, head, row, key] = w
    return out


def test_where_asks_the_sharp_row_with_four_options_in_position_order() -> None:
    enc = with_row(uniform(2, 3, 6, 6), 0, 1, 2, 4, 0.8)
    tr = synth.make_trace(src=SRC, L=2, H=3, encoder_self=enc)
    q = where_question(tr, "encoder_self", 0)
    assert isinstance(q, Question)
    assert (q.head, q.query, q.key) == (1, 2, 4)
    assert len(q.options) == 4 and q.options[q.answer] == "4 · house"
    positions = [int(o.split(" · ")[0]) for o in q.options]
    assert positions == sorted(positions)
    assert "80%" in q.why and "house" in q.why
    assert Question.from_dict(q.to_dict()) == q and Question.from_dict(q.to_dict()).id == q.id


def test_where_asks_of_a_head_not_taken_by_an_earlier_slide() -> None:
    """A deck asks where a layer's sharpest head looks once: the next slide asking "where" on
    that layer asks of the sharpest other head (slides 4 and 6 asked the same question)."""
    enc = with_row(with_row(uniform(1, 3, 6, 6), 0, 1, 2, 4, 0.9), 0, 2, 1, 3, 0.7)
    tr = synth.make_trace(src=SRC, L=1, H=3, encoder_self=enc)
    first = where_question(tr, "encoder_self", 0)
    assert isinstance(first, Question) and first.head == 1
    second = where_question(tr, "encoder_self", 0, taken={1})
    assert isinstance(second, Question) and (second.head, second.query, second.key) == (2, 1, 3)
    assert second.prompt != first.prompt
    left = where_question(tr, "encoder_self", 0, taken={1, 2})  # head 0 is diffuse
    assert isinstance(left, NoQuestion) and f"below {SHARP}" in left.reason
    gone = where_question(tr, "encoder_self", 0, taken={0, 1, 2})
    assert isinstance(gone, NoQuestion) and "asked about on an earlier slide" in gone.reason
    assert where_question(tr, "encoder_self", 0, 1, taken={1}) == first  # a head named is asked


def test_where_asks_nothing_on_a_diffuse_head() -> None:
    """The issue's complaint: the largest weight ~0.2 and a question was still graded."""
    enc = with_row(uniform(2, 3, 6, 6), 0, 1, 2, 4, 0.2)
    tr = synth.make_trace(src=SRC, L=2, H=3, encoder_self=enc)
    for head in (None, 1):
        q = where_question(tr, "encoder_self", 0, head)
        assert isinstance(q, NoQuestion) and f"below {SHARP}" in q.reason
    assert isinstance(where_question(tr, "encoder_self", 0, 1, query=3), NoQuestion)


def test_where_on_an_input_too_short_says_so_not_that_the_head_is_diffuse() -> None:
    """Two tokens: every row sees two keys. It said "its strongest weight is 0.00" of a head
    that put 0.99 on one of them."""
    enc = with_row(uniform(1, 2, 2, 2), 0, 1, 0, 0, 0.99)
    tr = synth.make_trace(src=("a", "</s>"), L=1, H=2, encoder_self=enc)
    q = where_question(tr, "encoder_self", 0)
    assert isinstance(q, NoQuestion)
    assert q.reason.startswith("every row sees fewer than 3 keys") and "0.00" not in q.reason
    row = where_question(tr, "encoder_self", 0, 1, query=0)
    assert isinstance(row, NoQuestion) and row.reason.startswith("row 0 sees fewer than 3")


def test_where_prefers_an_answer_that_is_a_word_to_the_end_token() -> None:
    enc = with_row(uniform(1, 2, 6, 6), 0, 0, 1, 5, 0.99)  # onto </s>, sharper
    enc = with_row(enc, 0, 1, 3, 0, 0.7)  # onto "the"
    tr = synth.make_trace(src=SRC, L=1, H=2, encoder_self=enc)
    q = where_question(tr, "encoder_self", 0)
    assert isinstance(q, Question) and (q.head, q.query, q.key) == (1, 3, 0)


def test_which_head_is_the_previous_token_head_needs_one_clear_winner() -> None:
    T = 7
    dec = np.tril(np.ones((T, T))) / np.tril(np.ones((T, T))).sum(-1, keepdims=True)
    dec = np.broadcast_to(dec, (2, 4, T, T)).astype(np.float32).copy()
    dec[1, 2] = synth.pattern(1, 1, T, 1)[0, 0]
    tgt = ("<s>", *"abcdef")
    tr = synth.make_trace(tgt=tgt, L=2, H=4, decoder_self=dec)
    q = head_question(tr, "decoder_self", "previous")
    assert isinstance(q, Question) and q.layer == 1 and q.options[q.answer] == "head 2"
    assert q.scores[2] == pytest.approx(1.0) and len(q.options) == 4
    dec[1, 3] = dec[1, 2]  # a second previous-token head: no fair question
    tied = synth.make_trace(tgt=tgt, L=2, H=4, decoder_self=dec)
    no = head_question(tied, "decoder_self", "previous")
    assert isinstance(no, NoQuestion) and "no single head" in no.reason


def test_the_alignment_head_is_asked_only_with_the_true_sources() -> None:
    T, S = 4, 6
    cross = np.full((1, 3, T, S), 1.0 / S, dtype=np.float32)
    reference = (4, 3, 1)
    for row, key in enumerate(reference):
        cross[0, 1, row] = 0.0
        cross[0, 1, row, key] = 1.0
    tr = synth.make_trace(src=SRC, tgt=("<s>", "x", "y", "z"), L=1, H=3, cross=cross)
    q = head_question(tr, "cross", "alignment", reference=reference)
    assert isinstance(q, Question) and q.options[q.answer] == "head 1"
    assert isinstance(head_question(tr, "cross", "alignment", reference=None), NoQuestion)


def test_greedy_is_asked_where_its_pick_is_likely_enough() -> None:
    run = synth.greedy_run()  # step 0: a 0.9; step 1: e 0.6
    q = greedy_question(run)
    assert isinstance(q, Question) and q.step == 1  # the least certain fair step
    assert q.options[q.answer] == "e" and "60%" in q.why
    shaky = synth.greedy_run()
    unsure = ((Candidate("e", 0.4), Candidate("x", 0.35)),)
    object.__setattr__(shaky.steps[1], "candidates", unsure)  # a frozen record, edited for the test
    assert isinstance(greedy_question(shaky, step=1), NoQuestion)
    assert isinstance(greedy_question(shaky), Question)  # step 0 (0.9) is still fair


def test_beam_beats_greedy_only_with_a_different_likelier_output() -> None:
    greedy, beam = synth.greedy_run(), synth.beam_run()  # greedy -0.6, beam "a" -0.3
    q = beam_question(greedy, beam)
    assert q.answer == 0 and "likelier" in q.why
    same = beam_question(greedy, greedy)
    assert same.answer == 1
