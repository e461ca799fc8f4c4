"""`attnlens serve --class-store URL --decks DIR`: checked before the app starts."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from attnlens.app.cli import _prepare_teaching, main


def test_a_store_that_cannot_be_used_stops_serve_with_its_reason(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "restored after the test")
    assert main(["serve", "--class-store", "postgres://db/x"]) == 2
    assert "sqlite:///PATH" in capsys.readouterr().err
    assert main(["serve", "--class-store", "redis://127.0.0.1:9/0"]) == 2  # nothing listens
    err = capsys.readouterr().err
    assert err.startswith("attnlens: error: class store redis://127.0.0.1:9/0") and err[-1] == "\n"
    assert main(["serve", "--decks", "/no/such/folder"]) == 2
    assert "--decks /no/such/folder: no such folder" in capsys.readouterr().err


def test_serve_names_each_bad_deck_and_sets_the_store_and_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "good.deck").write_text("=== One\nfigure: stacks\n\nWords.\n")
    (tmp_path / "bad.deck").write_text("=== One\nfigure: stacks\nlayer: x\n")
    store = f"sqlite:///{tmp_path / 'c.sqlite3'}"
    monkeypatch.delenv("ATTNLENS_DECKS", raising=False)
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "unused")
    args = argparse.Namespace(class_store=store, decks=[tmp_path])
    _prepare_teaching(args)
    err = capsys.readouterr().err
    assert err.count("attnlens: warning:") == 1 and "bad.deck: slide 1" in err
    assert "field 'layer'" in err
    assert os.environ["ATTNLENS_CLASS_STORE"] == store and (tmp_path / "c.sqlite3").exists()
    assert os.environ["ATTNLENS_DECKS"] == str(tmp_path.resolve())


def test_serve_uses_a_real_redis_store(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "unused")
    _prepare_teaching(argparse.Namespace(class_store=redis_url, decks=None))
    assert os.environ["ATTNLENS_CLASS_STORE"] == redis_url
