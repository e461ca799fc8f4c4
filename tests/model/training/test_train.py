"""Training: the §5.3 schedule, and a short run in which the loss falls."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from attnlens.model.net.config import TransformerConfig
from attnlens.model.training.loop import TrainConfig, learning_rate, snapshot_steps, train
from attnlens.model.training.objectives import TaskObjective
from attnlens.model.training.tasks import ReverseTask


def test_learning_rate_warms_up_then_decays() -> None:
    peak = learning_rate(400, 64, 400)
    assert learning_rate(100, 64, 400) == pytest.approx(peak / 4)
    assert learning_rate(1600, 64, 400) == pytest.approx(peak / 2)
    assert peak == pytest.approx(64**-0.5 * 400**-0.5)


def test_snapshots_are_log_spaced_and_end_at_the_last_step() -> None:
    steps = snapshot_steps(6000, 6)
    assert steps[0] == 60 and steps[-1] == 6000 and len(steps) == 6
    ratios = [b / a for a, b in itertools.pairwise(steps)]
    assert max(ratios) / min(ratios) < 1.1


def test_a_short_run_lowers_the_loss_and_saves_safetensors(tmp_path: Path) -> None:
    task = ReverseTask(max_len=6)
    vocab = len(task.tokenizer)
    mc = TransformerConfig(vocab, vocab, N=1, d_model=32, d_ff=64, h=2, max_len=16)
    tc = TrainConfig(
        steps=120, batch_size=32, warmup=40, eval_every=1000, eval_examples=20, snapshots=2
    )
    metrics = train(TaskObjective(task), mc, tc, tmp_path, device="cpu", progress=False)
    saved = json.loads((tmp_path / "config.json").read_text())
    curve = saved["loss_curve"]
    assert sum(curve[-10:]) / 10 < 0.8 * sum(curve[:10]) / 10
    assert (tmp_path / "model.safetensors").is_file()
    assert len(list((tmp_path / "snapshots").iterdir())) == 2
    assert 0.0 <= metrics["exact"] <= 1.0
