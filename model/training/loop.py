"""The one training loop, by the paper's recipe (§5), for every architecture we train.

An Objective (`objectives.py`) says what to build, which batch to draw and what to measure;
this loop does the rest alike: seeds, the §5.3 optimizer and schedule, snapshots along the
way, and the saved model with its metrics and loss curve.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from attnlens.model.net import checkpoint
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.device import device_name, pick_device
from attnlens.model.progress import bar as progress_bar
from attnlens.model.training.config import (
    TrainConfig,
    learning_rate,
    paper_optimizer,
    snapshot_steps,
)
from attnlens.model.training.objectives import Objective
from attnlens.model.training.snapshots import loss_curve as kept_loss_curve
from attnlens.record.errors import InputError

__all__ = ["TrainConfig", "learning_rate", "snapshot_steps", "train"]
LOSS_POINTS = 200  # the loss curve kept in config.json: about this many single-batch losses


def train(
    objective: Objective,
    model_config: TransformerConfig,
    config: TrainConfig,
    out: Path,
    device: str = "auto",
    progress: bool = True,
    then: Objective | None = None,
    first: Path | None = None,
) -> dict[str, Any]:
    """Train a model, save it (and its snapshots) to out, and return its held-out metrics.
    then: the second stage's objective (config.then_steps steps of it), measured by the first's.
    first: a folder holding the first stage already trained by this recipe: only the second
    stage runs, from its weights (its loss curve and snapshots are kept)."""
    if config.then_steps and then is None:
        raise InputError(f"then_steps={config.then_steps} needs the second stage's objective")
    torch.manual_seed(config.seed)
    dev = pick_device(device)
    net = objective.build(model_config).to(dev)
    objective.prepare(config)
    run = _Run(net, objective, config, out, dev, progress, model_config.d_model)
    if first is None:
        run.stage(objective, config.steps, random.Random(config.seed), 0)
    else:
        run.resume(first)
    if config.then_steps and then is not None:
        torch.manual_seed(config.then_seed)
        run.stage(then, config.then_steps, random.Random(config.then_seed), config.steps)
    run.bar.close()
    run.metrics["final_loss"] = run.losses[-1]
    meta = {
        **objective.description(),
        "training": asdict(config),
        "metrics": run.metrics,
        "loss_curve": [loss for _, loss in run.points],
        "loss_steps": [step for step, _ in run.points],
    }
    checkpoint.save(out, net, objective.tokenizer, meta)
    return run.metrics


class _Run:
    """One training run's network, losses, last metrics and progress bar, across its stages."""

    def __init__(
        self,
        net: nn.Module,
        objective: Objective,
        config: TrainConfig,
        out: Path,
        dev: torch.device,
        progress: bool,
        d_model: int,
    ) -> None:
        self.d_model = d_model
        self.net, self.measured, self.config, self.out, self.dev = net, objective, config, out, dev
        self.keep = set(snapshot_steps(config.steps, config.snapshots))
        if config.then_steps and config.snapshots:  # the second stage's end: the final weights
            self.keep.add(config.total_steps)
        self.losses: list[float] = []
        self.points: list[tuple[int, float]] = []  # (step, loss): the curve config.json keeps
        self.stride = max(1, config.total_steps // LOSS_POINTS)
        self.metrics: dict[str, Any] = {}
        self.shown: dict[str, float] = {}
        label = f"train {objective.name} on {device_name(dev)}"
        self.bar = progress_bar(total=config.total_steps, desc=label, enabled=progress)

    def stage(self, objective: Objective, steps: int, rng: random.Random, start: int) -> None:
        """steps steps of objective's batches from step start on, with a fresh optimizer."""
        config, net = self.config, self.net
        optimizer, schedule = paper_optimizer(net, self.d_model, config, start)
        for step in range(start + 1, start + steps + 1):
            loss = objective.loss(net, rng, config, self.dev)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            self.losses.append(float(loss.detach()))
            if (step - 1) % self.stride == 0:
                self.points.append((step, self.losses[-1]))
            self.shown["loss"] = self.losses[-1]
            if step % config.eval_every == 0 or step == config.total_steps:
                self.metrics = self.measured.measure(net)
                self.shown |= self.measured.shown(self.metrics)
            self.bar.set_postfix({k: f"{v:.3f}" for k, v in self.shown.items()}, refresh=False)
            self.bar.update()
            if step in self.keep:
                meta = {"step": step, "architecture": self.measured.architecture}
                path = self.out / "snapshots" / f"step-{step:06d}"
                checkpoint.save(path, net, self.measured.tokenizer, meta, half=True)

    def resume(self, first: Path) -> None:
        """Take the first stage from a folder this recipe trained: its weights, curve, snapshots."""
        description = checkpoint.read_description(first)
        made = description.get("training", {})
        if (made.get("steps"), made.get("seed")) != (self.config.steps, self.config.seed):
            raise InputError(
                f"{first.name} was not trained by this recipe's first stage: "
                f"steps {made.get('steps')} and seed {made.get('seed')}, "
                f"not {self.config.steps} and {self.config.seed}"
            )
        checkpoint.load_weights(self.net, first / checkpoint.WEIGHTS, self.dev)
        self.net.train()
        steps, losses = kept_loss_curve(description)
        self.points = [(s, v) for s, v in zip(steps, losses, strict=True) if s <= self.config.steps]
        self.losses = [v for _, v in self.points]
        self.bar.update(self.config.steps)
        if first.resolve() != self.out.resolve() and (first / "snapshots").is_dir():
            shutil.copytree(first / "snapshots", self.out / "snapshots", dirs_exist_ok=True)
