"""The Training page under AppTest: a slider over snapshots redraws the same head."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.web.resources import snapshot_scores
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.model.net import checkpoint
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.training.snapshots import SnapshotScore
from helpers.apptest import figures, open_bundled, open_on
from helpers.tiny import TINY_CHARS, tiny_transformer


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model with two earlier snapshots, each a loadable model with other weights."""
    folder = tmp_path_factory.mktemp("trained")
    meta = {"name": "tiny", "description": "random weights", "max_source_len": 12}
    tok = CharTokenizer(TINY_CHARS)
    checkpoint.save(folder, tiny_transformer(seed=0), tok, meta)
    for seed, step in ((1, 10), (2, 200)):
        checkpoint.save(
            folder / "snapshots" / f"step-{step:06d}", tiny_transformer(seed), tok, meta
        )
    return folder


def open_page(model_dir: Path, **params: str) -> AppTest:
    return open_on(model_dir, "training", **{"text": "bad", **params})


def test_snapshot_and_final_model_side_by_side(trained_dir: Path) -> None:
    at = open_page(trained_dir)
    assert not at.exception and not at.error
    assert at.select_slider(key="w_snapshot").value == 200
    early, final = figures(at)
    assert early["data"][0]["x"] == final["data"][0]["x"]  # same tokens, so the same axes
    assert early["data"][0]["z"] != final["data"][0]["z"]


def test_moving_the_slider_changes_the_snapshot(trained_dir: Path) -> None:
    at = open_page(trained_dir)
    before = figures(at)[0]["data"][0]["z"]
    at.select_slider(key="w_snapshot").set_value(10).run()
    assert not at.exception and not at.error
    assert figures(at)[0]["data"][0]["z"] != before
    assert at.query_params["snapshot"] == "10"
    at.selectbox(key="w_head").select(1).run()
    assert figures(at)[0]["layout"]["title"]["text"].endswith("head 1")


def test_query_params_pick_the_snapshot(trained_dir: Path) -> None:
    at = open_page(trained_dir, snapshot="10")
    assert at.select_slider(key="w_snapshot").value == 10


def test_a_model_without_snapshots_says_so(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    assert not at.exception and not at.error
    assert any("no training snapshots" in i.value for i in at.info)


def test_bad_input_gives_a_message(trained_dir: Path) -> None:
    at = open_page(trained_dir, text="")
    assert not at.exception
    assert any("empty" in e.value for e in at.error)


def test_the_training_curve_marks_the_shown_snapshot() -> None:
    from attnlens.model.lenses.registry import BUNDLED_DIR
    from attnlens.model.training.snapshots import snapshots

    found = [s.step for s in snapshots(BUNDLED_DIR / "translate")] or [0, 0, 0]  # or skipped
    at = open_bundled("training", "translate", timeout=120, snapshot=str(found[2]))
    assert not at.exception and not at.error
    scores_ready("translate")
    at.run()
    curve = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("training"))
    names = [t["name"] for t in curve["data"]]
    assert names == ["loss", "exact match", "best head aligned", "layer 1 head 0 aligned"]
    assert curve["data"][1]["x"] == found
    assert all(0 <= v <= 1 for t in curve["data"][1:] for v in t["y"])
    assert curve["data"][2]["y"][-1] > 0.85  # translate's best head at the end of training
    assert {s["x0"] for s in curve["layout"]["shapes"]} == {found[2]}
    at.select_slider(key="w_snapshot").set_value(found[-1]).run()
    curve = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("training"))
    assert {s["x0"] for s in curve["layout"]["shapes"]} == {found[-1]}


def scores_ready(name: str, timeout: float = 300) -> None:
    """Wait for the background scoring of a model's snapshots (started by the page)."""
    deadline = time.monotonic() + timeout
    while snapshot_scores(name) is None:
        assert time.monotonic() < deadline, f"scoring {name} took over {timeout} s"
        time.sleep(0.2)


def test_the_first_view_does_not_wait_for_the_scores(
    trained_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scoring every snapshot takes tens of seconds: the page shows the snapshots and the loss
    at once, says the scores are coming, and shows them on a run after they are ready."""
    folder = shutil.copytree(trained_dir, tmp_path / "model")  # a name no other test scored
    release = threading.Event()
    started = []

    def slow_scores(lens: object) -> list[SnapshotScore]:
        started.append(True)
        release.wait(60)
        return [SnapshotScore(s, 0.5, np.full((2, 2), 0.25)) for s in (10, 200)]

    monkeypatch.setattr(Seq2SeqLens, "_snapshot_scores", slow_scores)
    at = open_page(folder)  # returns while the scoring still waits
    assert not at.exception and not at.error
    deadline = time.monotonic() + 30  # the scoring thread may start after the page returned
    while not started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started and not release.is_set()
    assert any("in the background" in c.value for c in at.caption)
    assert len(figures(at)) == 2  # both heatmaps; no curve without loss or scores yet
    release.set()
    scores_ready(str(folder))
    at.run()
    curve = figures(at)[-1]
    assert {"exact match", "best head aligned"} <= {t["name"] for t in curve["data"]}
    assert not any("in the background" in c.value for c in at.caption)


def test_the_language_model_compares_snapshots_on_the_same_tokens() -> None:
    at = open_bundled("training", "lm", timeout=120)
    assert not at.exception and not at.error
    early, final, curve = figures(at)
    assert early["data"][0]["x"] == final["data"][0]["x"]  # prompt and continuation, both
    assert len(final["data"][0]["x"]) > len("The return statement") + 1
    assert [t["name"] for t in curve["data"]] == ["loss"]  # no task, no held-out scores


@pytest.mark.parametrize(("present", "side_by_side"), [("0", True), ("1", False)])
def test_the_two_heatmaps_stand_side_by_side_on_a_screen_and_stacked_on_a_projector(
    trained_dir: Path, present: str, side_by_side: bool
) -> None:
    """At 1920 px with projector type, half the page cut the heatmaps' titles."""
    at = open_page(trained_dir, present=present)
    assert not at.exception and not at.error
    in_columns = [
        heading.value
        for column in at.columns
        for heading in column.subheader
        if heading.value in ("finished model",) or heading.value.startswith("after ")
    ]
    assert (len(in_columns) == 2) is side_by_side
    assert len(figures(at)) >= 2
