"""`attnlens experiment NAME MODEL`: one JSON object whose `heads` rows carry layer, head and a
field per score; a second run is read from the cache; bad input exits 2 with one line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from attnlens.app.cli.main import main
from helpers.handbuilt import PREVIOUS
from helpers.hf_models import tiny_hf

SCORES = {
    "induction": {"induction", "previous_token", "second_copy_loss_ablated"},
    "importance": {"importance", "exact_drop", "confidence"},
    "explanation": {"spearman_erasure"},
    "alignment": {"aligned", "importance", "exact_drop"},
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["experiment", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one object, one line
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.mark.parametrize(
    ("name", "model"),
    [("induction", "LM"), ("importance", "LM"), ("explanation", "REV"), ("explanation", "LM"),
     ("alignment", "REV")],
)  # fmt: skip
def test_json_heads_rows_and_the_cache(
    name: str, model: str, hand_lm_dir: Path, hand_reverse_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    folder = str(hand_lm_dir if model == "LM" else hand_reverse_dir)
    data = run_json(capsys, name, folder, "--n", "3")
    assert data["schema"] == "attnlens.experiment/1" and data["experiment"] == name
    assert data["params"]["n"] == 3 and data["cached"] is False
    assert data["heads"] and all({"kind", "layer", "head"} <= set(row) for row in data["heads"])
    assert SCORES[name] <= set(data["heads"][0])
    again = run_json(capsys, name, folder, "--n", "3")
    assert again["cached"] is True and again["heads"] == data["heads"]


def test_the_hand_built_previous_token_head_reads_one_in_the_json(
    hand_lm_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "induction", str(hand_lm_dir), "--n", "4")
    row = next(r for r in data["heads"] if (r["layer"], r["head"]) == PREVIOUS)
    assert row["previous_token"] == pytest.approx(1.0, abs=1e-6)


def test_table_output_and_files(
    hand_lm_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv, record, figure = tmp_path / "h.csv", tmp_path / "r.json", tmp_path / "f.html"
    argv = ["experiment", "induction", str(hand_lm_dir), "--n", "3", "--text", "abcabc"]
    assert main([*argv, "--out", str(csv), "--figure", str(figure)]) == 0
    out = capsys.readouterr().out
    assert "Induction heads (Olsson et al. 2022)" in out and "previous_token_score:" in out
    assert "computed in" in out and "second_copy_loss_ablated" in out
    heads = pd.read_csv(csv)
    assert {"layer", "head", "induction", "previous_token"} <= set(heads.columns)
    assert "plotly" in figure.read_text()[:5000].lower()
    assert main([*argv, "--out", str(record)]) == 0
    assert "read from the cache" in capsys.readouterr().out
    assert json.loads(record.read_text())["experiment"] == "induction"


def test_a_hugging_face_decoder_gives_every_heads_importance_and_a_pruning_curve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = run_json(capsys, "importance", str(tiny_hf("gpt2")), "--n", "3")
    assert len(data["heads"]) == 4 and not data["notes"]
    for row in data["heads"]:
        assert math.isfinite(row["importance"]) and math.isfinite(row["confidence"])
    assert data["summary"]["heads"] == 4 and math.isfinite(data["summary"]["loglik"])
    induction = run_json(capsys, "induction", str(tiny_hf("gpt2")), "--n", "3")
    assert induction["summary"]["copy_loss_ratio"] is not None
    assert all(math.isfinite(r["second_copy_loss_ablated"]) for r in induction["heads"])


def test_a_hugging_face_encoder_gives_importance_by_output_similarity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = run_json(capsys, "importance", str(tiny_hf("bert")), "--n", "3")
    assert all(r["importance"] > 0 for r in data["heads"])  # any head moves the output a bit
    assert data["summary"]["similarity"] == pytest.approx(1.0, abs=1e-6)
    assert any("cosine similarity" in note for note in data["notes"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["experiment", "nonsense", "LM"], "invalid choice"),
        (["experiment", "induction", "LM", "--n", "0"], "between 1 and"),
        (["experiment", "induction", "REV"], "encoder-decoder"),
        (["experiment", "alignment", "LM"], "no known alignment"),
        (["experiment", "explanation", "BERT"], "encoder-only"),
        (["experiment", "induction", "LM", "--out", "x.txt"], "--out must end in"),
        (["experiment", "induction", "LM", "--figure", "x.gif"], "--figure must end in"),
        (["experiment", "induction", "no-such-model"], "no model"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str], message: str, hand_lm_dir: Path, hand_reverse_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    names = {"LM": str(hand_lm_dir), "REV": str(hand_reverse_dir), "BERT": str(tiny_hf("bert"))}
    assert main([names.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert message in last and "Traceback" not in err


def test_the_python_entry_point_gives_the_same_record(hand_lm_dir: Path) -> None:
    import attnlens

    first = attnlens.experiment("induction", str(hand_lm_dir), n=3)
    lens = attnlens.load(str(hand_lm_dir), device="cpu")
    assert attnlens.experiment("induction", lens, n=3).to_json() == first.to_json()


def test_eval_on_the_induction_model_points_to_its_experiment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from helpers.apptest import require_bundled

    require_bundled("induction")
    assert main(["eval", "induction"]) == 2
    assert "attnlens experiment induction induction" in capsys.readouterr().err
