"""Heads against the known truth: alignment accuracy per cross head, a known answer on a
hand-built attention array, agreement with `attnlens eval`'s own count, and importance beside."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.analysis.experiments.alignment import (
    alignment_accuracy,
    measure_alignment,
    true_source_hits,
)
from attnlens.analysis.experiments.importance import measure_importance
from attnlens.model.lenses.lens import Lens
from attnlens.model.training.tasks import get_task
from attnlens.record.errors import InputError
from helpers.parts import evaluation


def test_a_head_on_the_true_source_hits_every_token_and_padding_never_does() -> None:
    alignments = [(2, 1, 0), (0,)]
    cross = np.full((2, 1, 2, 4, 3), 1 / 3)  # (B, L, H, T, S)
    for b, alignment in enumerate(alignments):
        for t, source in enumerate(alignment):
            cross[b, 0, 0, t] = 0.0
            cross[b, 0, 0, t, source] = 1.0
            cross[b, 0, 1, t] = 0.0
            cross[b, 0, 1, t, (source + 1) % 3] = 1.0  # always one off
    cross[1, :, :, 1:] = np.nan  # the second example's padding
    hits = true_source_hits(cross, alignments)
    assert hits.tolist() == [[4, 0]]


def test_accuracy_agrees_with_the_count_attnlens_eval_makes(hand_reverse: Lens) -> None:
    examples = get_task("reverse").examples(30, seed=9)
    accuracy, total = alignment_accuracy(hand_reverse, examples)
    counted = evaluation(hand_reverse).evaluate(30, 9)  # the same examples, as training counts
    np.testing.assert_allclose(accuracy, counted.head_alignment, atol=1e-4)
    assert total == sum(len(e.target) for e in examples)


def test_alignment_sits_beside_importance(hand_reverse: Lens) -> None:
    importance = measure_importance(hand_reverse, n=10, seed=0, pruning=False)
    result = measure_alignment(hand_reverse, importance, n=10, seed=0)
    assert result.heads["kind"].unique().tolist() == ["cross"]
    assert len(result.heads) == 4 and result.heads["aligned"].between(0, 1).all()
    assert result.score("importance", "cross", 1, 1) == pytest.approx(0, abs=1e-6)  # silent
    s = result.summary
    assert len(s["mean_alignment_by_layer"]) == 2 and s["target_tokens"] > 0
    assert 1 <= s["best_aligned_head_importance_rank"] <= 4


def test_a_model_without_a_task_has_no_known_alignment(hand_lm: Lens) -> None:
    importance = measure_importance(hand_lm, n=2, seed=0, pruning=False)
    with pytest.raises(InputError, match="no known alignment"):
        measure_alignment(hand_lm, importance, n=4)
