"""The command line: records on standard output, one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from attnlens.record.trace import Trace
from helpers.cli import run


def test_trace_prints_a_valid_record(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        ["trace", str(tiny_model_dir), "abc", "--target", "cba", "--device", "cpu"], capsys
    )
    assert code == 0
    tr = Trace.from_json(out)
    assert tr.src_tokens == ("a", "b", "c", "</s>") and tr.tgt_tokens == ("<s>", "c", "b", "a")


def test_trace_writes_csv_and_npz(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv, npz = tmp_path / "t.csv", tmp_path / "t.npz"
    for fmt, out in (("csv", csv), ("npz", npz)):
        args = ["trace", str(tiny_model_dir), "ab", "--target", "b", "--format", fmt]
        assert run([*args, "--out", str(out)], capsys)[0] == 0
    frame = pd.read_csv(csv)
    tr = Trace.from_npz(npz.read_bytes())
    assert len(frame) == sum(
        a.size for a in (tr.encoder_self, tr.decoder_self, tr.cross) if a is not None
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trace", "no-such-model", "abc"], "no model 'no-such-model'"),
        (["trace", "{tiny}", ""], "text is empty"),
        (["trace", "{tiny}", "a" * 40], "40 characters"),
        (["trace", "{tiny}", "abc", "--format", "xml"], "invalid choice: 'xml'"),
        (["trace", "{tiny}", "abc", "--device", "tpu"], "device must be auto, cpu, cuda or cuda:N"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["train", "reverse", "--steps", "0"], "--steps must be at least 1"),
        (["train", "no-task"], "no training recipe for 'no-task'"),
        (["serve", "--port", "70000"], "--port must be between 1 and 65535"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], message: str, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([a.replace("{tiny}", str(tiny_model_dir)) for a in args], capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in err


def test_unknown_characters_warn_on_stderr(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["trace", str(tiny_model_dir), "aZ", "--target", "a"], capsys)
    assert code == 0 and "<unk>" in err and "'Z'" in err
    assert json.loads(out)["src_tokens"] == ["a", "<unk>", "</s>"]


def test_console_script_runs_as_a_process(tiny_model_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "attnlens.app.cli.main", "trace", str(tiny_model_dir), ""],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "attnlens: error: text is empty; type at least one character"


def test_models_lists_bundled_models(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["models", "--json"], capsys)
    assert code == 0
    names = [m["name"] for m in json.loads(out)]
    assert "reverse" in names
