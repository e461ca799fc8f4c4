"""Each experiment's numbers recomputed from traces by its written definition
(analysis/experiments/definitions.py, shown on the page and in docs/experiments.md), without
the experiment's code: the definitions say what the numbers are."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from attnlens.analysis.agreement import case_correlations
from attnlens.analysis.experiments.alignment import measure_alignment
from attnlens.analysis.experiments.definitions import DEFINITIONS
from attnlens.analysis.experiments.explanation import erasure_case
from attnlens.analysis.experiments.importance import measure_importance
from attnlens.analysis.experiments.induction import measure_induction, repeated_tokens
from attnlens.model.lenses.lens import Lens
from attnlens.model.training.tasks import get_task
from attnlens.record.stats import spearman
from helpers.parts import runs

DOCS = Path(__file__).resolve().parents[3] / "docs" / "experiments.md"


def test_induction_and_previous_token_scores_are_the_written_means(hand_lm: Lens) -> None:
    result = measure_induction(hand_lm, n=4, seed=1)
    seqs = repeated_tokens(hand_lm, 4, seed=1)  # the inputs: the definition draws them so
    names = runs(hand_lm).token_space().names
    P, b = seqs.prefix, seqs.block
    induction, previous = [], []
    for ids in seqs.sequences:
        trace = hand_lm.trace("".join(names[i] for i in ids[P:]))
        assert trace.decoder_self is not None and len(trace.tgt_tokens) == len(ids)
        w = trace.decoder_self  # (L, H, T, T)
        induction.append(np.mean([w[:, :, q, q - b + 1] for q in range(P + b, P + 2 * b)], 0))
        previous.append(np.mean([w[:, :, q, q - 1] for q in range(P + 1, P + 2 * b)], 0))
    for name, want in (
        ("induction", np.mean(induction, 0)),
        ("previous_token", np.mean(previous, 0)),
    ):
        got = result.heads.set_index(["layer", "head"])[name]
        for (layer, head), value in got.items():
            assert value == pytest.approx(float(want[layer, head]), abs=1e-5), (name, layer, head)
    assert result.summary["previous_token_score"] == pytest.approx(1.0, abs=1e-5)


def test_confidence_is_each_query_rows_largest_weight_averaged(hand_reverse: Lens) -> None:
    result = measure_importance(hand_reverse, n=5, seed=3, pruning=False)
    examples = get_task("reverse").examples(5, seed=3)
    traces = [hand_reverse.trace(e.source, e.target) for e in examples]
    for row in result.heads.itertuples():
        tops = np.concatenate([getattr(t, row.kind)[row.layer, row.head].max(-1) for t in traces])
        assert row.confidence == pytest.approx(float(tops.mean()), abs=1e-5)


def test_alignment_accuracy_is_the_share_of_argmaxes_on_the_true_source(
    hand_reverse: Lens,
) -> None:
    importance = measure_importance(hand_reverse, n=6, seed=0, pruning=False)
    result = measure_alignment(hand_reverse, importance, n=6, seed=0)
    examples = get_task("reverse").examples(6, seed=0)
    hits, total = 0, 0
    for e in examples:
        cross = hand_reverse.trace(e.source, e.target).cross  # (L, H, T, S)
        assert cross is not None
        truth = np.asarray(e.alignment)
        hits = hits + (cross[:, :, : truth.size].argmax(-1) == truth).sum(-1)
        total += truth.size
    for row in result.heads.itertuples():
        assert row.aligned == hits[row.layer, row.head] / total


def test_raw_attention_and_rollout_are_ranked_against_erasure_as_written(hand_lm: Lens) -> None:
    text = "abcab"
    case = erasure_case(hand_lm, text)
    trace = hand_lm.trace(text)
    assert trace.decoder_self is not None
    w = trace.decoder_self.astype(np.float64)  # (L, H, T, T)
    q, T = len(trace.tgt_tokens) - 1, len(trace.tgt_tokens)
    mixed = 0.5 * w.mean(1) + 0.5 * np.eye(T)  # (L, T, T): heads averaged, half residual
    mixed /= mixed.sum(-1, keepdims=True)
    table = case_correlations(case).set_index(["method", "layer"])["spearman"]
    rolled = np.eye(T)
    for layer in range(w.shape[0]):
        rolled = mixed[layer] @ rolled
        raw = w[layer, :, q].mean(0)
        assert table["raw", layer] == pytest.approx(spearman(raw, case.erasure), nan_ok=True)
        assert table["rollout", layer] == pytest.approx(
            spearman(rolled[q], case.erasure), nan_ok=True
        )
    assert np.isnan(case.erasure[0]) and np.isfinite(case.erasure[1:]).all()  # <s> not erased


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_the_docs_state_each_definition_as_the_page_does(name: str) -> None:
    def flat(text: str) -> str:  # one line, the docs' quote marks gone
        return re.sub(r"\s+", " ", re.sub(r"^> ?", "", text, flags=re.MULTILINE)).strip()

    assert flat(DEFINITIONS[name]) in flat(DOCS.read_text())
