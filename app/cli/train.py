"""`attnlens train RECIPE`: a bundled model's recipe trained from scratch (docs/models.md)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attnlens
from attnlens.app.cli.usage import UsageError

if TYPE_CHECKING:  # torch's modules: a command that does not train (serve) never imports them
    from attnlens.model.training.config import TrainConfig


def add_train_parser(sub: Any) -> None:
    train = sub.add_parser("train", help="train a bundled model's recipe from scratch")
    train.add_argument("task", metavar="RECIPE", nargs="?", help="a recipe name (see --list)")
    train.add_argument("--list", action="store_true", help="print the recipe names and stop")
    train.add_argument("--out", type=Path, help="folder for the weights (default: runs/TASK)")
    train.add_argument("--steps", type=int, help="training steps (default: the recipe's)")
    train.add_argument("--seed", type=int, help="random seed (default: the recipe's)")
    train.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")
    train.add_argument(
        "--resume",
        type=Path,
        metavar="FOLDER",
        help="a two-stage recipe (sort): take the first stage from FOLDER, train the second",
    )


def cmd_train(args: argparse.Namespace) -> None:
    from attnlens.model.training.loop import train
    from attnlens.model.training.recipes import RECIPES, get_recipe

    if args.list:
        print("\n".join(RECIPES))
        return
    if args.task is None:
        raise UsageError("attnlens train: give a recipe name (attnlens train --list)")
    recipe = get_recipe(args.task)
    out = args.out or Path("runs") / args.task
    config = _with_overrides(recipe.train, args)
    then = recipe.then() if recipe.then is not None and config.then_steps else None
    first = _first_stage(args.resume, config)
    objective, model = recipe.objective(), recipe.model
    metrics = train(objective, model, config, out, args.device, then=then, first=first)
    shown = {k: v for k, v in metrics.items() if k != "head_alignment"}
    print(json.dumps({"out": str(out), **shown}))


def _first_stage(resume: Path | None, config: TrainConfig) -> Path | None:
    """--resume: the folder of a two-stage recipe's first stage (checked before training)."""
    from attnlens.model.net.checkpoint import DESCRIPTION

    if resume is None:
        return None
    if not config.then_steps:
        raise attnlens.InputError("--resume continues a recipe's second stage; this one has none")
    if not (resume / DESCRIPTION).is_file():
        raise attnlens.InputError(f"--resume {resume}: no trained model there")
    return resume


def _with_overrides(config: TrainConfig, args: argparse.Namespace) -> TrainConfig:
    """The recipe's training settings with --steps and --seed applied."""
    if args.steps is not None:
        if args.steps < 1:
            raise attnlens.InputError(f"--steps must be at least 1, got {args.steps}")
        config = replace(config, steps=args.steps)
    if args.seed is not None:
        config = replace(config, seed=args.seed)
    return config
