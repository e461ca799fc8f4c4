"""`attnlens decode`: the record on standard output or in a file; bad settings exit 2, one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnlens.app.cli.main import main
from attnlens.record.decode import DecodeRun
from helpers.cli import run


def test_decode_prints_a_record_with_every_flag_recorded(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["decode", str(tiny_model_dir), "abc", "--strategy", "beam", "--beam-size", "3"]
    args += ["--max-len", "9", "--length-penalty", "0.6", "--force", "0=h", "2= "]
    args += ["--ablate", "1.1", "encoder_self:0.0", "--device", "cpu"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    rec = DecodeRun.from_json(out)
    assert rec.strategy == "beam"
    assert rec.params == {
        "max_len": 9,
        "beam_size": 3,
        "length_penalty": 0.6,
        "force": {0: "h", 2: " "},
        "ablate": ["cross:1.1", "encoder_self:0.0"],
    }
    assert rec.output_tokens[0] == "h" and len(rec.steps) <= 9


def test_the_older_kind_names_of_ablate_give_the_same_run(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["decode", str(tiny_model_dir), "abc", "--device", "cpu", "--ablate"]
    code, new, err = run([*base, "decoder_self:1.0", "encoder_self:0.1"], capsys)
    assert code == 0, err
    code, old, err = run([*base, "decoder:1.0", "encoder:0.1"], capsys)
    assert code == 0, err
    assert old == new  # the record names the heads the new way either way
    assert DecodeRun.from_json(old).params["ablate"] == ["decoder_self:1.0", "encoder_self:0.1"]


def test_decode_sample_flags_and_out_file(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "run.json"
    args = ["decode", str(tiny_model_dir), "abc", "--strategy", "sample", "--temperature", "0.7"]
    args += ["--top-k", "4", "--top-p", "0.9", "--seed", "12", "--out", str(out_file)]
    code, out, _ = run(args, capsys)
    assert code == 0 and out == ""
    data = json.loads(out_file.read_text())
    assert data["params"] == {
        "max_len": 23, "temperature": 0.7, "top_k": 4, "top_p": 0.9, "seed": 12,
        "force": {}, "ablate": [],
    }  # fmt: skip
    code, again, _ = run(args[:-2], capsys)
    assert json.loads(again) == data  # the same seed gives the same run


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--strategy", "beam", "--beam-size", "0"], "beam size must be between 1 and 16, got 0"),
        (["--beam-size", "17"], "beam size must be between 1 and 16, got 17"),
        (["--temperature", "0"], "temperature must be greater than 0, got 0.0"),
        (["--top-p", "1.5"], "top-p must be in (0, 1], got 1.5"),
        (["--top-p", "0"], "top-p must be in (0, 1], got 0.0"),
        (["--top-k", "0"], "top-k must be at least 1, got 0"),
        (["--max-len", "500"], "max length 500 is above this model's limit of 23"),
        (["--max-len", "4", "--force", "4=a"], "forced step 4 is outside the output"),
        (["--force", "1=zz"], "forced token 'zz' at step 1 is not in the model's vocabulary"),
        (["--force", "1=a", "1=b"], "step 1 is forced twice"),
        (["--force", "one=a"], "--force expects STEP=TOKEN"),
        (["--ablate", "2.0"], "head cross:2.0 does not exist"),
        (["--ablate", "0.9"], "head cross:0.9 does not exist"),
        (["--ablate", "x.y"], "is not LAYER.HEAD"),
        (["--strategy", "nucleus"], "invalid choice: 'nucleus'"),
    ],
)
def test_bad_settings_exit_2_with_one_line(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    code, out, err = run(["decode", str(tiny_model_dir), "abc", *flags], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("attnlens"), err
    assert message in err
    assert "Traceback" not in err


def test_help_documents_the_ablation_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["decode", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "LAYER.HEAD" in text and "cross:1.2" in text and "decoder-only" in text
    assert "encoder_self:, decoder_self: or cross:" in text and "encoder: and decoder:" in text
