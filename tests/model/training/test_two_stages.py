"""A recipe's second stage (sort's): training goes on from the first stage's weights on another
mix, with the §5.3 rate continuing; --resume runs only that stage from a saved first stage, and
gives the very weights a run of both stages gives."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from attnlens.model.net.config import TransformerConfig
from attnlens.model.training.config import paper_optimizer
from attnlens.model.training.loop import TrainConfig, learning_rate, train
from attnlens.model.training.objectives import TaskObjective
from attnlens.model.training.snapshots import loss_curve
from attnlens.model.training.tasks.sort import SortRunsTask, SortTask
from attnlens.record.errors import InputError

TASK = SortTask(max_len=6)
VOCAB = len(TASK.tokenizer)
MODEL = TransformerConfig(VOCAB, VOCAB, N=1, d_model=32, d_ff=64, h=2, max_len=16)
STAGES = TrainConfig(
    steps=30, batch_size=16, warmup=10, eval_every=1000, eval_examples=10, snapshots=2,
    then_steps=20, then_seed=7,
)  # fmt: skip


def _train(out: Path, config: TrainConfig = STAGES, first: Path | None = None) -> dict:
    then = TaskObjective(SortRunsTask(max_len=6)) if config.then_steps else None
    train(TaskObjective(TASK), MODEL, config, out, "cpu", progress=False, then=then, first=first)
    return json.loads((out / "config.json").read_text())


def test_resuming_the_second_stage_gives_the_weights_of_both_stages(tmp_path: Path) -> None:
    both = _train(tmp_path / "both")
    _train(tmp_path / "first", replace(STAGES, then_steps=0))
    resumed = _train(tmp_path / "resumed", first=tmp_path / "first")
    a = load_file(str(tmp_path / "both" / "model.safetensors"))
    b = load_file(str(tmp_path / "resumed" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    first = load_file(str(tmp_path / "first" / "model.safetensors"))
    assert not all(torch.equal(a[k], first[k]) for k in a), "the second stage trained"
    steps, losses = loss_curve(both)
    assert steps[0] == 1 and steps[-1] <= 50 and max(steps) > 30  # both stages on one axis
    assert loss_curve(resumed)[1][-1] == losses[-1]
    firsts = sorted(p.name for p in (tmp_path / "first" / "snapshots").iterdir())
    kept = sorted(p.name for p in (tmp_path / "resumed" / "snapshots").iterdir())
    assert kept == [*firsts, "step-000050"]  # the first stage's, and the second stage's end


def test_the_second_stage_takes_up_the_rate_where_the_first_left_it() -> None:
    net = torch.nn.Linear(2, 2)
    optimizer, _ = paper_optimizer(net, 64, STAGES, start=30)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(learning_rate(31, 64, 10))


def test_a_second_stage_needs_its_objective_and_a_first_stage_of_this_recipe(
    tmp_path: Path,
) -> None:
    with pytest.raises(InputError, match="then_steps=20"):
        train(TaskObjective(TASK), MODEL, STAGES, tmp_path / "x", "cpu", progress=False)
    _train(tmp_path / "other", replace(STAGES, steps=25, then_steps=0))
    with pytest.raises(InputError, match="steps 25 and seed 0, not 30 and 0"):
        _train(tmp_path / "resumed", first=tmp_path / "other")


def test_sort_runs_task_draws_one_long_run_among_other_characters() -> None:
    examples = SortRunsTask().examples(400, seed=3)
    longest_runs = [max(len(r) for r in _runs(e.source)) for e in examples]
    assert sum(n >= 3 for n in longest_runs) > 0.4 * len(examples)
    assert all(e.target == "".join(sorted(e.source)) for e in examples)


def _runs(text: str) -> list[str]:
    return ["".join(group) for _, group in itertools.groupby(text)]
