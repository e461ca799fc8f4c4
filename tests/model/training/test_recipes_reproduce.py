"""`make models` reproduces the bundled models made by this code: each recipe, replayed for the
steps of its first snapshot with one thread (as `make models` trains), gives that snapshot to
within float16 rounding.

Not bit for bit: the sums inside a matrix product follow the CPU's vector width, so the same
code on the same data gives weights a few float16 units apart on another CPU (on an AMD EPYC
without AVX-512, replaying reverse's 60 steps left at most 0.0016 between them; translate and lm
matched exactly). What the tolerance catches is a change of data, seed or schedule: another
seed leaves 0.45 between them at the same step.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from attnlens.model.lenses.registry import BUNDLED_DIR
from attnlens.model.net import checkpoint
from attnlens.model.training.loop import TrainConfig, train
from attnlens.model.training.recipes import RECIPES
from attnlens.model.training.snapshots import snapshots
from helpers.apptest import require_bundled

FLOAT16_UNITS = 5e-3  # a few float16 steps of a weight near 1 (its spacing there is 1/1024)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reverse", "sort", "dates", "translate", "lm", "induction"])
def test_the_first_snapshot_of_each_bundled_model_is_reproduced(name: str, tmp_path: Path) -> None:
    require_bundled(name)
    assert torch.get_num_threads() == 1, "made with one thread: the sums' order depends on it"
    first = snapshots(BUNDLED_DIR / name)[0]
    recipe = RECIPES[name]
    made = checkpoint.read_description(BUNDLED_DIR / name)["training"]
    assert TrainConfig(**made) == recipe.train  # fields it does not name: their defaults
    config = replace(
        recipe.train, steps=first.step, snapshots=0, eval_every=10**9, eval_examples=1, then_steps=0
    )
    train(recipe.objective(), recipe.model, config, tmp_path, device="cpu", progress=False)
    ours = load_file(str(tmp_path / checkpoint.WEIGHTS))
    bundled = load_file(str(first.path / checkpoint.WEIGHTS))
    assert ours.keys() == bundled.keys()
    apart = {k: float((ours[k].half().float() - bundled[k].float()).abs().max()) for k in ours}
    worst = max(apart, key=apart.__getitem__)
    assert apart[worst] <= FLOAT16_UNITS, f"{name} at step {first.step}: {worst} {apart[worst]}"
