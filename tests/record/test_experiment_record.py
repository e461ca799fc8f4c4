"""The attnlens.experiment/1 record: JSON and back without loss, NaN as null."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from attnlens.record.experiment import ExperimentResult


def result() -> ExperimentResult:
    heads = pd.DataFrame(
        {"kind": ["cross", "cross"], "layer": [0, 1], "head": [1, 0],
         "importance": [0.25, np.nan], "confidence": [np.nan, np.nan]}
    )  # fmt: skip
    curve = pd.DataFrame({"heads_removed": [0, 1], "removed": ["", "cross:1.0"],
                          "exact_beam": [0.5, np.nan]})  # fmt: skip
    return ExperimentResult(
        "importance", "m", {"n": 3, "seed": 0}, heads,
        {"best": [1, 0], "score": np.float32(0.5), "missing": float("nan")},
        {"pruning": curve}, ("a note",), 1.5,
    )  # fmt: skip


def test_round_trip_keeps_every_value_and_nan_is_null() -> None:
    r = result()
    text = r.to_json()
    data = json.loads(text)
    assert data["schema"] == "attnlens.experiment/1"
    assert data["heads"][1]["importance"] is None and data["summary"]["missing"] is None
    assert data["heads"][0] == {"kind": "cross", "layer": 0, "head": 1, "importance": 0.25,
                                "confidence": None}  # fmt: skip
    back = ExperimentResult.from_json(text)
    pd.testing.assert_frame_equal(back.heads, r.heads, check_dtype=False)
    pd.testing.assert_frame_equal(back.tables["pruning"], r.tables["pruning"], check_dtype=False)
    assert back.notes == r.notes and back.seconds == 1.5 and back.params == r.params
    assert back.score("importance", "cross", 0, 1) == 0.25
    assert np.isnan(back.score("importance", "cross", 5, 5))


def test_other_records_and_tables_without_head_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="expected schema"):
        ExperimentResult.from_dict({"schema": "attnlens.trace/1"})
    with pytest.raises(ValueError, match="lacks the columns"):
        ExperimentResult("x", "m", {}, pd.DataFrame({"layer": [0]}))
