"""Raw attention, rollout and flow against erasure (analysis/agreement.py) on hand-built cases."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.analysis.agreement import (
    case_correlations,
    correlation_table,
    head_correlations,
    importance,
    paper_table,
)
from attnlens.record.erasure import ErasureCase
from attnlens.record.stats import spearman


def test_spearman_known_values() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(a, a * 10) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    assert spearman(np.array([1.0, 1.0, 2.0, 3.0]), np.array([5.0, 6.0, 7.0, 8.0])) == (
        pytest.approx(0.9486833)  # ranks 1.5, 1.5, 3, 4 against 1, 2, 3, 4
    )
    assert np.isnan(spearman(np.ones(4), a)) and np.isnan(spearman(a[:2], a[:2]))
    assert spearman(np.array([np.nan, 1.0, 2.0, 3.0]), np.array([9.0, 1.0, 2.0, 3.0])) == 1.0


def decoder_case(row: list[float], erasure: list[float]) -> ErasureCase:
    """One layer, one head; the last position's attention row is `row`."""
    T = len(row)
    att = np.tril(np.ones((T, T)))
    att = att / att.sum(-1, keepdims=True)
    att[-1] = row
    return ErasureCase(
        tuple("abcdef"[:T]), "x", T - 1, -1.0, np.array(erasure), None, att[None, None], None
    )


def test_attention_ranked_as_erasure_correlates_one_by_every_method() -> None:
    case = decoder_case([0.1, 0.2, 0.3, 0.4], [np.nan, 1.0, 2.0, 3.0])
    table = case_correlations(case)
    assert table["spearman"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    backwards = decoder_case([0.4, 0.3, 0.2, 0.1], [np.nan, 1.0, 2.0, 3.0])
    assert case_correlations(backwards).set_index("method").loc["raw", "spearman"] == -1.0


def test_one_layer_flow_is_the_rollout_row() -> None:
    case = decoder_case([0.1, 0.2, 0.3, 0.4], [np.nan, 1.0, 2.0, 3.0])
    rollout, flow = importance(case, "rollout", 0), importance(case, "flow", 0)
    assert flow == pytest.approx(rollout)
    assert rollout == pytest.approx([0.05, 0.1, 0.15, 0.7])  # half attention, half residual


def seq2seq_case(j: int, S: int = 4, T: int = 3) -> ErasureCase:
    """Encoder and decoder self-attention on themselves only; every cross head on source j."""
    cross = np.zeros((1, 2, T, S))
    cross[..., j] = 1.0
    eye = lambda n: np.broadcast_to(np.eye(n), (1, 2, n, n)).copy()  # noqa: E731
    return ErasureCase(
        tuple("abc") + ("</s>",), "x", 1, -1.0, np.array([0.0, 1.0, 0.0, np.nan]),
        eye(S), eye(T), cross,
    )  # fmt: skip


def test_seq2seq_rollout_and_flow_reach_only_the_attended_source() -> None:
    case = seq2seq_case(1)
    assert importance(case, "raw", 0) == pytest.approx([0, 1, 0, 0])
    assert importance(case, "rollout", 0) == pytest.approx([0, 0.5, 0, 0])  # half via memory
    assert importance(case, "flow", 0) == pytest.approx([0, 0.5, 0, 0])
    assert case_correlations(case)["spearman"].tolist() == pytest.approx([1.0] * 3)


def test_the_table_averages_cases_and_pivots_like_the_paper() -> None:
    good = decoder_case([0.1, 0.2, 0.3, 0.4], [np.nan, 1.0, 2.0, 3.0])
    bad = decoder_case([0.4, 0.3, 0.2, 0.1], [np.nan, 1.0, 2.0, 3.0])
    table = correlation_table([case_correlations(good), case_correlations(bad)])
    raw = table.set_index("method").loc["raw"]
    assert raw["mean"] == pytest.approx(0.0) and raw["std"] == pytest.approx(1.0)
    assert raw["cases"] == 2
    wide = paper_table(table)
    assert wide.columns.tolist() == ["method", "layer 0"]
    assert wide["method"].tolist() == ["raw", "rollout", "flow"]
    assert wide["layer 0"].iloc[0] == "0.00 ± 1.00"
    heads = head_correlations([good, bad])
    assert heads[["layer", "head"]].values.tolist() == [[0, 0]]
    assert heads["spearman_erasure"].iloc[0] == pytest.approx(0.0)
