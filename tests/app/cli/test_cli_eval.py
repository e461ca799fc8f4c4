"""`attnlens eval`: exact match and per-head alignment, as a table or JSON; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlens.app.cli.evaluate import DEFAULT_SEED
from attnlens.app.cli.main import main
from attnlens.model.lenses.registry import BUNDLED_DIR
from attnlens.model.net import checkpoint
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.transformer import Transformer
from attnlens.model.training.evaluate import evaluate
from attnlens.model.training.tasks import get_task


@pytest.fixture(scope="module")
def sort_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained model saved as if trained on the sort task."""
    torch.manual_seed(0)
    tok = get_task("sort").tokenizer
    config = TransformerConfig(len(tok), len(tok), N=2, d_model=16, d_ff=32, h=2, max_len=32)
    folder = tmp_path_factory.mktemp("sort-model")
    checkpoint.save(folder, Transformer(config).eval(), tok, {"name": "s", "task": "sort"})
    return folder


def test_json_report_matches_evaluate(
    sort_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(sort_model_dir), "--n", "40", "--seed", "7", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    net, tok, _ = checkpoint.load(sort_model_dir, torch.device("cpu"))
    expected = evaluate(net, tok, get_task("sort").examples(40, seed=7))
    assert report["task"] == "sort" and report["n"] == 40 and report["seed"] == 7
    assert report["exact"] == pytest.approx(expected.exact)
    np.testing.assert_allclose(report["head_alignment"], expected.head_alignment, atol=1e-4)
    assert report["best_head"] == list(expected.best_head)
    assert report["best_head_alignment"] == pytest.approx(expected.best_alignment)
    assert len(report["head_alignment"]) == 2 and len(report["head_alignment"][0]) == 2


def test_table_names_every_head_and_the_best(
    sort_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(sort_model_dir), "--n", "20"]) == 0
    out = capsys.readouterr().out
    assert f"seed {DEFAULT_SEED}" in out and "exact match:" in out
    assert "layer 0" in out and "layer 1" in out and "head 1" in out
    assert "best head: layer" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "no-such-model"], "no model"),
        (["eval", "SORT_DIR", "--n", "0"], "--n must be at least 1"),
        (["eval", "SORT_DIR", "--n", "100001", "--suite", "hard"], "--n must be at most 100000"),
        (["eval", "TINY_DIR"], "not trained on one of our tasks"),
        (["eval", "SORT_DIR", "--n", "ten"], "invalid int value"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str],
    message: str,
    sort_model_dir: Path,
    tiny_model_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folders = {"SORT_DIR": str(sort_model_dir), "TINY_DIR": str(tiny_model_dir)}
    assert main([folders.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_the_language_model_reports_perplexity_again(capsys: pytest.CaptureFixture[str]) -> None:
    folder = BUNDLED_DIR / "lm"
    if not (folder / "config.json").is_file():
        pytest.skip("lm is not bundled yet")
    assert main(["eval", "lm", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    stored = json.loads((folder / "config.json").read_text())["metrics"]
    assert report["task"] == "lm" and report["n"] == stored["held_out_sentences"]
    assert abs(report["perplexity"] - stored["perplexity"]) < 1e-3  # what training measured
    assert report["perplexity"] < report["unigram_perplexity"] / 3
    assert main(["eval", "lm", "--n", "10"]) == 0
    assert "10 held-out sentences" in capsys.readouterr().out
    assert main(["eval", "lm", "--suite", "hard", "--n", "5", "--json"]) == 0
    hard = json.loads(capsys.readouterr().out)
    kinds = {k["kind"]: k for k in hard["kinds"]}
    assert hard["n"] == 25 and list(kinds) == [
        "upper case", "lower case", "shortest", "longest", "repeats"
    ]  # fmt: skip
    assert kinds["upper case"]["perplexity"] > 3 * kinds["lower case"]["perplexity"]


def test_the_hard_suite_reports_each_kind(
    sort_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", str(sort_model_dir), "--suite", "hard", "--n", "10", "--seed", "3"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    net, tok, _ = checkpoint.load(sort_model_dir, torch.device("cpu"))
    suite = get_task("sort").hard_suite(10, seed=3)
    assert report["suite"] == "hard" and report["n"] == 50
    assert [k["kind"] for k in report["kinds"]] == list(suite)
    for kind in report["kinds"]:
        assert kind["exact"] == pytest.approx(evaluate(net, tok, suite[kind["kind"]]).exact)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "hard suite, 5 kinds × 10 examples (50 in all), seed 3" in out
    for kind in suite:
        assert any(line.startswith(kind) and "best head" not in line for line in out.splitlines())
    assert "exact match (every kind):" in out and "best head: layer" in out


def test_an_unknown_suite_exits_2(sort_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(sort_model_dir), "--suite", "easy"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'easy'" in err and err.count("\n") == 1
