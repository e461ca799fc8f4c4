"""The one training loop, by the paper's recipe (§5), for every architecture we train.

An Objective (`objectives.py`) says what to build, which batch to draw and what to measure;
this loop does the rest alike: seeds, the §5.3 optimizer and schedule, snapshots along the
way, and the saved model with its metrics and loss curve.
"""

from __future__ import annotations

import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

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

__all__ = ["TrainConfig", "learning_rate", "snapshot_steps", "train"]
LOSS_POINTS = 200  # the loss curve kept in config.json: about this many single-batch losses


def train(
    objective: Objective,
    model_config: TransformerConfig,
    config: TrainConfig,
    out: Path,
    device: str = "auto",
    progress: bool = True,
) -> dict[str, Any]:
    """Train a model, save it (and its snapshots) to out, and return its held-out metrics."""
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    dev = pick_device(device)
    net = objective.build(model_config).to(dev)
    optimizer, schedule = paper_optimizer(net, model_config.d_model, config)
    objective.prepare(config)
    keep = set(snapshot_steps(config.steps, config.snapshots))
    losses: list[float] = []
    metrics: dict[str, Any] = {}
    shown: dict[str, float] = {}
    label = f"train {objective.name} on {device_name(dev)}"
    bar = progress_bar(range(1, config.steps + 1), desc=label, enabled=progress)
    for step in bar:
        loss = objective.loss(net, rng, config, dev)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        shown["loss"] = losses[-1]
        if step % config.eval_every == 0 or step == config.steps:
            metrics = objective.measure(net)
            shown |= objective.shown(metrics)
        bar.set_postfix({k: f"{v:.3f}" for k, v in shown.items()}, refresh=False)
        if step in keep:
            meta = {"step": step, "architecture": objective.architecture}
            checkpoint.save(
                out / "snapshots" / f"step-{step:06d}", net, objective.tokenizer, meta, half=True
            )
    metrics["final_loss"] = losses[-1]
    meta = {
        **objective.description(),
        "training": asdict(config),
        "metrics": metrics,
        "loss_curve": losses[:: max(1, len(losses) // LOSS_POINTS)],
    }
    checkpoint.save(out, net, objective.tokenizer, meta)
    return metrics
