"""Crafted and broken model folders (tests/helpers/crafted.py builds each from a tiny valid
one): every one exits 2 with one line, no traceback, no allocation over the model limit,
within 10 s. Sizes are checked before anything is built, so `N=1e7` or `max_len=1e10` cost
nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from attnlens.app.cli.main import main
from helpers import crafted
from helpers.hf_models import tiny_hf
from helpers.memory import own_peak, reset_own_peak
from helpers.tiny import save_tiny_model

MB = 2**20
LIMIT_MB = 256  # ATTNLENS_MAX_MODEL_MB for these tests; the tiny models take well under 1 MB
SECONDS = 10.0


def refuse(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Trace with a crafted folder: exit 2, one line, in time, within the memory limit."""
    capsys.readouterr()
    measured = reset_own_peak()
    before, start = own_peak(), time.monotonic()
    code = main(["trace", str(folder), "abc"])
    took, grown = time.monotonic() - start, own_peak() - before
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert took < SECONDS, f"took {took:.1f} s"
    if measured:
        assert grown < LIMIT_MB * MB, f"peak RSS grew {grown / MB:.0f} MB"
    return err.strip()


@pytest.fixture(autouse=True)
def model_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_MODEL_MB", str(LIMIT_MB))


@pytest.mark.parametrize("name", list(crafted.OWN))
def test_a_crafted_folder_of_ours_is_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = crafted.build_own(name, tmp_path)
    message = refuse(folder, capsys)
    assert folder.name in message or "not allowed" in message, message


@pytest.mark.parametrize("name", list(crafted.HF))
def test_a_crafted_hugging_face_folder_is_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = crafted.build_hf(name, tmp_path, tiny_hf("bert"))
    message = refuse(folder, capsys)
    assert folder.name in message, message


@pytest.mark.parametrize(
    ("name", "says"),
    [("N=1e7", "has 10000000 layers; attnlens loads models of at most 1024"),
     ("max_len=1e10", "would take 596 GB"), ("vocab 4e7 both", "would take 2.53 GB"),
     ("d_ff=1e12", "above the limit of 256 MB (ATTNLENS_MAX_MODEL_MB)"),
     ("tokenizer smaller than the vocabulary", "has 7 tokens but the model's vocabulary has 13"),
     ("shape mismatch", "is 64 but the config makes it 32"),
     ("h=0", "h must be at least 1, got 0"),
     ("task is a list", "config.json: 'task' must be a JSON string, but it is a JSON list")],
)  # fmt: skip
def test_refusals_name_the_value_and_the_limit(
    name: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert says in refuse(crafted.build_own(name, tmp_path), capsys)


def test_a_deep_hugging_face_config_is_refused_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = crafted.build_hf("hf num_hidden_layers=100000", tmp_path, tiny_hf("bert"))
    assert "has 100000 layers; attnlens loads models of at most 1024" in refuse(folder, capsys)


@pytest.mark.parametrize("server", [False, True])
def test_a_name_with_a_null_byte_is_one_line_through_the_command_line(
    server: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39's `reverse\\x00` passed the server's check, then failed with a raw ValueError
    (embedded null byte); issue 45 asked for it again through the command line."""
    if server:
        monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    capsys.readouterr()
    assert main(["trace", "reverse\x00", "abc"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "holds no control characters" in err and "'reverse\\x00'" in err


def test_a_folder_through_dot_dot_traces_under_its_own_name_on_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39's `/allowed/m1/sub/..` loaded under the name `..`."""
    folder = save_tiny_model(tmp_path / "m1")
    meta = json.loads((folder / "config.json").read_text())
    del meta["name"]  # a folder without a name of its own is named after the folder
    (folder / "config.json").write_text(json.dumps(meta))
    (folder / "sub").mkdir()
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    monkeypatch.setenv("ATTNLENS_ALLOWED_MODELS", str(folder))
    capsys.readouterr()
    assert main(["trace", str(folder / "sub" / ".."), "abc"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)["model"]["name"] == "m1"
    assert main(["trace", str(tmp_path), "abc"]) == 2  # the folder above: not allowed
    assert "not allowed on this server" in capsys.readouterr().err
