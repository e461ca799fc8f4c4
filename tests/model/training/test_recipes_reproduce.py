"""`make models` reproduces the bundled models made by this code: each recipe, replayed for the
steps of its first snapshot with one thread (as `make models` trains), gives that snapshot bit
for bit."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from attnlens.model.lenses.registry import BUNDLED_DIR
from attnlens.model.net import checkpoint
from attnlens.model.training.loop import train
from attnlens.model.training.recipes import RECIPES
from attnlens.model.training.snapshots import snapshots
from helpers.apptest import require_bundled


# translate and lm were trained (22 Nov) by an earlier version of this code: replayed today, their
# step-40 weights differ, so make models gives models of the same recipes but not these bits (the
# README says so). They were not retrained: their training data did not change.
@pytest.mark.slow
@pytest.mark.parametrize("name", ["reverse", "sort", "dates", "induction"])
def test_the_first_snapshot_of_each_bundled_model_is_reproduced(name: str, tmp_path: Path) -> None:
    require_bundled(name)
    assert torch.get_num_threads() == 1, "bitwise equal only with the one thread it was made with"
    first = snapshots(BUNDLED_DIR / name)[0]
    recipe = RECIPES[name]
    assert checkpoint.read_description(BUNDLED_DIR / name)["training"] == asdict(recipe.train)
    config = replace(recipe.train, steps=first.step, snapshots=0, eval_every=10**9, eval_examples=1)
    train(recipe.objective(), recipe.model, config, tmp_path, device="cpu", progress=False)
    ours = load_file(str(tmp_path / checkpoint.WEIGHTS))
    bundled = load_file(str(first.path / checkpoint.WEIGHTS))
    assert ours.keys() == bundled.keys()
    differ = [k for k in ours if not torch.equal(ours[k].half(), bundled[k])]
    assert not differ, f"{name} at step {first.step}: {differ[:3]} differ"
