"""The command line at the edges (issue 16): `--target-tokens` reads a decode record back
exactly, `--pair` reads a sentence pair, and both fail in one line when they cannot."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from attnlens.record.decode import DecodeRun
from attnlens.record.trace import Trace
from helpers import cli
from helpers.hf_zoo import zoo_folder


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    return cli.run([*args, "--device", "cpu"], capsys)


def test_a_decode_record_is_read_back_exactly_from_its_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a subword model the output text does not always re-tokenize to the output tokens;
    the record's own tokens do, so the read-back sum is the score."""
    folder, text, saved = str(zoo_folder("bart")), "the cat sat on the mat", tmp_path / "run.json"
    args = ["decode", folder, text, "--strategy", "beam", "--beam-size", "3", "--max-len", "5"]
    assert run([*args, "--out", str(saved)], capsys)[0] == 0
    decoded = DecodeRun.from_json(saved.read_text())
    for given in (str(saved), json.dumps(list(decoded.output_tokens))):
        code, out, _ = run(["trace", folder, text, "--target-tokens", given], capsys)
        assert code == 0
        tr = Trace.from_json(out)
        assert tr.tgt_logprobs is not None
        fed = decoded.output_tokens[:-1] if decoded.best.finished else decoded.output_tokens
        assert tr.tgt_tokens == (*decoded.prefix, *fed)
        logprobs = tr.tgt_logprobs if decoded.best.finished else tr.tgt_logprobs[:-1]
        assert math.isclose(float(logprobs.sum()), decoded.score, abs_tol=1e-4)


@pytest.mark.parametrize(
    ("given", "message"),
    [("no-such-file.json", "is neither"), ("[1, 2]", "list of token strings"),
     ('["a", "zzzz"]', "'zzzz' is not in")],
)  # fmt: skip
def test_bad_target_tokens_fail_in_one_line(
    given: str, message: str, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["trace", str(tiny_model_dir), "abc", "--target-tokens", given], capsys)
    assert code == 2 and message in err and err.count("\n") == 1


def test_a_sentence_pair_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(zoo_folder("bert"))
    code, out, _ = run(["trace", folder, "the cat sat", "--pair", "a dog"], capsys)
    assert code == 0
    tr = Trace.from_json(out)
    assert tr.src_segments is not None and tr.src_segments[-1] == 1
    assert tr.src_segments.count(1) == len(tr.src_tokens) - tr.src_segments.index(1)
    figure = tmp_path / "pair.json"
    args = ["plot", folder, "the cat sat", "--pair", "a dog", "--view", "pair"]
    assert run([*args, "--out", str(figure)], capsys)[0] == 0
    assert "sentence B" in json.loads(figure.read_text())["layout"]["title"]["subtitle"]["text"]
    code, _, err = run(["trace", str(zoo_folder("bart")), "the cat", "--pair", "a dog"], capsys)
    assert code == 2 and "reads one text" in err
    code, _, err = run(["plot", folder, "the cat", "--view", "pair"], capsys)
    assert code == 2 and "one text, not a sentence pair" in err
