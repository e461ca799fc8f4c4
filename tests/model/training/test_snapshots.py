"""Training snapshots are found in step order, and only folders holding a model count."""

from __future__ import annotations

from pathlib import Path

import pytest

import attnlens
from attnlens.model.training.snapshots import score_snapshots, snapshots
from helpers.parts import training

BUNDLED = {entry.name for entry in attnlens.bundled_models()}


def test_snapshots_are_listed_in_step_order(tiny_model_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "m" / "snapshots"
    for step in (100, 20, 3):
        (root / f"step-{step:06d}").mkdir(parents=True)
        (root / f"step-{step:06d}" / "config.json").write_text(
            (tiny_model_dir / "config.json").read_text()
        )
    (root / "step-000050").mkdir()  # still being written: no config.json
    (root / "notes").mkdir()
    found = snapshots(tmp_path / "m")
    assert [s.step for s in found] == [3, 20, 100]
    assert found[0].path == root / "step-000003"


def test_a_model_without_snapshots_has_none(tiny_model_dir: Path) -> None:
    assert snapshots(tiny_model_dir) == []
    can = attnlens.load(str(tiny_model_dir)).capabilities
    assert can.training is None and "no training snapshots" in can.reason("training")
    assert snapshots(Path("no-such-model")) == []


def test_bundled_snapshots_load(tiny_model_dir: Path) -> None:
    for entry in attnlens.bundled_models():
        kept = attnlens.load(entry.name).capabilities.training
        for snap in kept.snapshots()[:1] if kept is not None else []:
            assert kept.snapshot(snap.step).info.n_layers >= 1


def test_snapshot_scores_rise_along_training() -> None:
    found = training(attnlens.load("reverse")).snapshots() if "reverse" in BUNDLED else []
    if not found:
        pytest.skip("reverse is not bundled yet")
    scores = score_snapshots(found, "reverse", n=100)
    assert [s.step for s in scores] == [s.step for s in found]
    first, last = scores[0], scores[-1]
    assert first.exact < 0.1 and first.best_alignment < 0.5
    assert last.exact >= 0.95 and last.best_alignment >= 0.95
    assert all(s.head_alignment.shape == (2, 4) for s in scores)


def test_task_and_loss_curve_come_from_the_models_description(tiny_model_dir: Path) -> None:
    task_of = lambda name: attnlens.load(name).capabilities.task  # noqa: E731
    assert task_of("translate").name == "translate" and task_of("reverse").name == "reverse"
    assert task_of("lm") is None and task_of(str(tiny_model_dir)) is None
    steps, losses = training(attnlens.load("reverse")).loss_curve()
    assert len(steps) == len(losses) > 100 and steps[0] == 1 and steps[-1] <= 6000
    assert steps == sorted(steps) and losses[-1] < losses[0] / 2
    assert attnlens.load(str(tiny_model_dir)).capabilities.training is None  # nor a curve


@pytest.mark.skipif(not {"translate", "reverse"} <= BUNDLED, reason="bundled models missing")
def test_a_snapshot_reads_typed_text_as_its_finished_model_does() -> None:
    """Its config.json holds no task: read on its own, "The cat sees a house." was two <unk>s
    on the Training page, beside the finished model's "the" and "house"."""
    final = attnlens.load("translate")
    early = training(final).snapshot(training(final).snapshots()[0].step)
    typed = "The cat sees a house."
    tr = final.trace(typed)
    tr_early = early.trace(typed, target_tokens=tr.tgt_tokens[1:])
    assert tr_early.src_tokens == tr.src_tokens == ("the", "cat", "sees", "a", "house", "</s>")
    assert tr_early.warnings == tr.warnings and "<unk>" not in " ".join(tr_early.warnings)
    reverse = attnlens.load("reverse")  # and warns past the length it was trained on
    first = training(reverse).snapshots()[0].step
    assert training(reverse).snapshot(first).trained_len == reverse.trained_len
