"""`attnlens trace --record`: a scores record on the command line, in NPZ, JSON and CSV, each
the same attention as the weights record of the same text."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnlens.app.cli.main import main
from attnlens.record.trace import Trace
from helpers.hf_zoo import zoo_folder

TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out, folder = tmp_path_factory.mktemp("records"), str(zoo_folder("llama"))
    made = {}
    for record, fmt in (("weights", "npz"), ("scores", "npz"), ("scores", "json"),
                        ("weights", "csv"), ("scores", "csv")):  # fmt: skip
        made[f"{record}.{fmt}"] = out / f"{record}.{fmt}"
        args = ["trace", folder, TEXT, "--record", record, "--format", fmt, "--device", "cpu"]
        assert main([*args, "--out", str(made[f"{record}.{fmt}"])]) == 0
    return made


def test_a_scores_record_holds_scores_and_reads_back_as_the_same_attention(
    records: dict[str, Path],
) -> None:
    weights = Trace.from_npz(records["weights.npz"].read_bytes())
    for name in ("scores.npz", "scores.json"):
        path = records[name]
        scores = (
            Trace.from_npz(path.read_bytes())
            if name.endswith("npz")
            else Trace.from_json(path.read_text())
        )
        assert scores.scores is not None and scores.decoder_self is None
        got = scores.attention("decoder_self")
        assert np.abs(got - weights.attention("decoder_self")).max() <= 1e-6


def test_the_csv_of_a_scores_record_is_the_weights_csv(records: dict[str, Path]) -> None:
    weights = pd.read_csv(io.StringIO(records["weights.csv"].read_text()))
    scores = pd.read_csv(io.StringIO(records["scores.csv"].read_text()))
    assert weights.drop(columns="weight").equals(scores.drop(columns="weight"))
    assert np.abs(weights["weight"] - scores["weight"]).max() <= 1e-6


def test_a_record_the_flag_does_not_know_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "reverse", "abc", "--record", "dense"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--record" in err and "dense" in err
