"""An experiment's summary as a table a person reads, not the record's JSON."""

from __future__ import annotations

import pandas as pd

from attnlens.record.experiment import ExperimentResult
from attnlens.viz.experiments.experiment_summary import summary_table


def shown(summary: dict[str, object]) -> dict[str, str]:
    empty = pd.DataFrame(columns=["kind", "layer", "head"])
    table = summary_table(ExperimentResult("x", "m", {}, empty, summary))
    assert list(table.columns) == ["measure", "value"]
    return dict(zip(table["measure"], table["value"], strict=True))


def test_heads_read_as_layer_dot_head_and_layers_are_named() -> None:
    rows = shown({
        "best_aligned_head": [1, 0], "best_alignment": 0.9133,
        "mean_alignment_by_layer": [0.1854, 0.7717], "alignment_heads": 3,
        "spearman_alignment_importance": 0.6667, "best_aligned_head_importance_rank": 3,
    })  # fmt: skip
    assert rows["best aligned head"] == "1.0"
    assert rows["best alignment"] == "91.3%"
    assert rows["mean alignment by layer"] == "layer 0: 18.5% · layer 1: 77.2%"
    assert rows["alignment heads (≥ 80%)"] == "3"
    assert rows["Spearman ρ, alignment vs importance"] == "0.6667"  # a correlation, not a share
    assert rows["best-aligned head's importance rank"] == "3"
    assert not any("[" in v for v in rows.values())  # no JSON lists left


def test_flags_kinds_and_missing_numbers_read_in_words() -> None:
    rows = shown({
        "targets_met": True, "heads_in_different_layers": False,
        "exact_all_of_kind_removed": {"cross": 0.0, "encoder_self": 1.0},
        "mean_spearman_last_layer": {"raw": 0.04, "flow": float("nan")},
        "best_method_last_layer": None, "induction_head": [1, 0],
    })  # fmt: skip
    assert rows["targets met"] == "yes" and rows["heads in different layers"] == "no"
    assert (
        rows["exact match, every head of one kind removed"] == "cross: 0.0% · encoder self: 100.0%"
    )
    assert rows["mean Spearman ρ with erasure, last layer"] == "raw: 0.04 · flow: n/a"
    assert rows["best method last layer"] == "n/a" and rows["induction head"] == "1.0"
