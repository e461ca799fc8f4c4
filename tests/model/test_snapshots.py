"""Training snapshots are found in step order, and only folders holding a model count."""

from __future__ import annotations

from pathlib import Path

import model
from model.snapshots import snapshots


def test_snapshots_are_listed_in_step_order(tiny_model_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "m" / "snapshots"
    for step in (100, 20, 3):
        (root / f"step-{step:06d}").mkdir(parents=True)
        (root / f"step-{step:06d}" / "config.json").write_text(
            (tiny_model_dir / "config.json").read_text()
        )
    (root / "step-000050").mkdir()  # still being written: no config.json
    (root / "notes").mkdir()
    found = snapshots(str(tmp_path / "m"))
    assert [s.step for s in found] == [3, 20, 100]
    assert found[0].path == root / "step-000003"


def test_a_model_without_snapshots_has_none(tiny_model_dir: Path) -> None:
    assert snapshots(str(tiny_model_dir)) == []
    assert snapshots("no-such-model") == []


def test_bundled_snapshots_load(tiny_model_dir: Path) -> None:
    for entry in model.bundled_models():
        for snap in snapshots(entry.name)[:1]:
            assert model.load(str(snap.path)).info.n_layers >= 1
