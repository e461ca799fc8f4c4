"""Induction heads (Olsson et al.): the scores on hand-built cases whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.analysis.experiments.induction import (
    copy_losses,
    measure_induction,
    pattern_scores,
    repeated_tokens,
)
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.registry import load
from attnlens.record.errors import InputError
from helpers.apptest import require_bundled
from helpers.handbuilt import PREVIOUS, SILENT
from helpers.parts import runs


def exact_heads(B: int, P: int, b: int) -> np.ndarray:
    """(B, 2, 2, T, T): head 0.0 on the previous token, head 1.0 on the token after the earlier
    match in the second copy (its own position elsewhere), the others uniform over the past."""
    T = P + 2 * b
    att = np.tril(np.ones((T, T)))
    att = np.broadcast_to(att / att.sum(-1, keepdims=True), (B, 2, 2, T, T)).copy()
    att[:, 0, 0] = np.eye(T, k=-1)
    att[:, 0, 0, 0, 0] = 1.0
    att[:, 1, 0] = np.eye(T)
    for q in range(P + b, T):
        att[:, 1, 0, q] = 0.0
        att[:, 1, 0, q, q - b + 1] = 1.0
    return att


def test_an_exact_induction_head_and_an_exact_previous_token_head_score_one() -> None:
    induction, previous = pattern_scores(exact_heads(3, 1, 5), prefix=1, block=5)
    assert induction[1, 0] == 1.0 and previous[0, 0] == 1.0
    assert previous[1, 0] == 0.0 and induction[0, 0] == 0.0
    T = 11
    uniform_previous = np.mean([1 / (q + 1) for q in range(2, T)])  # q sees keys 0..q;
    assert previous[0, 1] == pytest.approx(uniform_previous)  # counted from q = P + 1


def test_copy_losses_leave_out_each_copys_first_token() -> None:
    P, b = 1, 4
    nll = np.zeros((2, P + 2 * b - 1))  # index t scores token t + 1
    nll[:, P - 1] = 100.0  # the first copy's first token: unpredictable, left out
    nll[:, P : P + b - 1] = 3.0
    nll[:, P + b - 1] = 100.0  # the second copy's first token: left out too
    nll[:, P + b :] = 0.3
    first, second = copy_losses(-nll, P, b)
    assert (first, second) == pytest.approx((3.0, 0.3))


def test_the_hand_built_previous_token_head_scores_one_through_the_lens(hand_lm: Lens) -> None:
    result = measure_induction(hand_lm, n=8, seed=1)
    assert result.score("previous_token", "decoder_self", *PREVIOUS) == pytest.approx(1.0, abs=1e-6)
    assert result.summary["previous_token_head"] == list(PREVIOUS)
    base = result.summary["second_copy_loss"]
    for layer, head in SILENT:  # writes nothing, so ablating it changes nothing
        ablated = result.score("second_copy_loss_ablated", "decoder_self", layer, head)
        assert ablated == pytest.approx(base, abs=1e-5)
    ablated = result.score("second_copy_loss_ablated", "decoder_self", *PREVIOUS)
    assert abs(ablated - base) > 1e-3
    assert set(result.heads.columns) >= {"layer", "head", "induction", "previous_token"}
    assert result.heads["kind"].unique().tolist() == ["decoder_self"]  # as the records say


def test_sequences_are_a_block_of_distinct_tokens_twice(hand_lm: Lens) -> None:
    seqs = repeated_tokens(hand_lm, 5, seed=3)
    space = runs(hand_lm).token_space()
    for s in seqs.sequences:
        block = s[seqs.prefix : seqs.prefix + seqs.block]
        assert s[: seqs.prefix] == space.prefix and len(set(block)) == seqs.block
        assert s[seqs.prefix + seqs.block :] == block
        assert set(block) <= set(space.ordinary)
    assert repeated_tokens(hand_lm, 5, seed=3) == seqs


def test_an_encoder_decoder_is_refused_by_name(hand_reverse: Lens) -> None:
    with pytest.raises(InputError, match="encoder-decoder"):
        measure_induction(hand_reverse, n=4)


@pytest.mark.parametrize("n", [0, -1, 10**6])
def test_bad_n_is_refused_with_the_limit(hand_lm: Lens, n: int) -> None:
    with pytest.raises(InputError, match="between 1 and"):
        measure_induction(hand_lm, n=n)


def test_the_bundled_induction_model_meets_the_targets_of_issue_15() -> None:
    require_bundled("induction")
    result = measure_induction(load("induction", device="cpu"), n=100, seed=0)
    s = result.summary
    assert s["induction_score"] >= 0.9 and s["previous_token_score"] >= 0.9
    assert s["induction_head"][0] != s["previous_token_head"][0]
    assert s["copy_loss_ratio"] <= 0.2 and s["targets_met"] is True
