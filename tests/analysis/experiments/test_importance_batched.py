"""Importance with the ablated heads side by side (the lens' run_ablations and
task_scores_many) gives the result of one set of heads per forward pass and each beam search
alone (`batched=False`, the path before them), on our encoder-decoder, our decoder and a
Hugging Face encoder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnlens.analysis.experiments.importance import measure_importance
from attnlens.model.lenses.lens import Lens
from attnlens.record.experiment import ExperimentResult

TOLERANCE = 1e-6


def assert_same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for column in a.columns:
        if pd.api.types.is_numeric_dtype(a[column]):
            np.testing.assert_allclose(a[column], b[column], rtol=0, atol=TOLERANCE)
        else:
            assert a[column].tolist() == b[column].tolist(), column


def assert_same_summary(a: object, b: object) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for key in a:
            assert_same_summary(a[key], b[key])
    elif isinstance(a, float):
        assert a == pytest.approx(b, abs=TOLERANCE, nan_ok=True)
    else:
        assert a == b


def assert_same(batched: ExperimentResult, reference: ExperimentResult) -> None:
    assert_same_frames(batched.heads, reference.heads)
    assert batched.tables.keys() == reference.tables.keys()
    for name in batched.tables:
        assert_same_frames(batched.tables[name], reference.tables[name])
    assert_same_summary(batched.summary, reference.summary)
    assert batched.params == reference.params and batched.notes == reference.notes


def test_a_task_models_importance_and_curves_with_beam_search_are_as_one_at_a_time(
    hand_reverse: Lens,
) -> None:
    batched = measure_importance(hand_reverse, n=12, seed=2, beam=True)
    assert_same(batched, measure_importance(hand_reverse, n=12, seed=2, beam=True, batched=False))
    assert batched.tables["pruning"]["exact_beam"].notna().all()
    assert batched.heads["importance"].abs().max() > 1e-3  # heads that matter: a real test


def test_a_decoders_importance_is_as_one_at_a_time(hand_lm: Lens) -> None:
    batched = measure_importance(hand_lm, n=7, seed=1)
    assert_same(batched, measure_importance(hand_lm, n=7, seed=1, batched=False))
    assert batched.heads["importance"].abs().max() > 1e-4


def test_a_hugging_face_encoders_importance_is_as_one_at_a_time() -> None:
    import torch

    from attnlens.model.lenses.hf.lens import HFLens
    from helpers.silenced import loud

    lens = HFLens(loud("bert")[0], torch.device("cpu"), name="loud-bert")
    batched = measure_importance(lens, n=5, seed=0)
    assert_same(batched, measure_importance(lens, n=5, seed=0, batched=False))
    assert batched.heads["importance"].min() > 1e-3
