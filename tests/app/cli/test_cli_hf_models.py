"""The command line on Hugging Face models of the zoo: a config naming ids outside the vocabulary
ends in one line, and a decoder smaller than its encoder plots its own last layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnlens.app.cli.main import main
from helpers.hf_zoo import variant, zoo_folder

TEXT = "the cat sat on the mat on the mat"


@pytest.mark.parametrize(
    ("name", "key", "value"),
    [("gpt2", "eos_token_id", 50000), ("bart", "decoder_start_token_id", 999),
     ("t5", "eos_token_id", [1, 70000])],
)  # fmt: skip
def test_ids_outside_the_vocabulary_end_trace_in_one_line(
    name: str, key: str, value: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: trace died in a 79-94-line traceback, decode ran and never finished."""
    folder = variant(name, tmp_path, {key: value}, {key: value})
    bad = value[-1] if isinstance(value, list) else value
    assert main(["trace", str(folder), "hello", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("attnlens:")]
    assert len(said) == 1 and f"{key} is {bad}" in said[0] and "Traceback" not in err


def test_a_decoder_smaller_than_its_encoder_plots_its_own_last_layer(tmp_path: Path) -> None:
    out = tmp_path / "cross.json"
    args = ["plot", str(zoo_folder("distilbart")), TEXT, "--view", "heatmap", "--kind", "cross"]
    assert main([*args, "--out", str(out), "--device", "cpu"]) == 0  # default layer: the last
    assert "layer 0" in json.loads(out.read_text())["layout"]["title"]["text"]
