"""The paper's training recipe (§5): Adam(0.9, 0.98, 1e-9), the warm-up schedule, and how long
and how to train, as one frozen dataclass."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class TrainConfig:
    """How long and how to train; the defaults are sized for 2 CPU cores."""

    steps: int = 4000
    batch_size: int = 128
    warmup: int = 400  # §5.3 warmup_steps
    lr_factor: float = 1.0  # multiplies the §5.3 learning rate
    label_smoothing: float = 0.1  # §5.4 ε_ls
    seed: int = 0
    eval_every: int = 500
    eval_examples: int = 500
    snapshots: int = 6  # log-spaced checkpoints kept from along training
    # A second stage (none at 0 steps): training goes on from the weights reached, on the
    # recipe's second objective (another mix of inputs), with a fresh Adam, its own seed, and
    # the §5.3 rate continuing from `steps` (no second warm-up).
    then_steps: int = 0
    then_seed: int = 0

    @property
    def total_steps(self) -> int:
        return self.steps + self.then_steps


def learning_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """§5.3: lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    step = max(step, 1)
    return float(factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5))


def snapshot_steps(steps: int, count: int) -> list[int]:
    """count distinct steps, log-spaced from 1% of training to its end."""
    if count <= 0:
        return []
    first = max(1, steps // 100)
    picks = {round(first * (steps / first) ** (i / max(count - 1, 1))) for i in range(count)}
    return sorted(picks)


def paper_optimizer(
    net: nn.Module, d_model: int, config: TrainConfig, start: int = 0
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """§5.3: Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9, and the warm-up learning rate per step
    (from step start + 1 on: a second stage goes on where the first left the rate)."""
    optimizer = torch.optim.Adam(net.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: learning_rate(start + s + 1, d_model, config.warmup, config.lr_factor)
    )
    return optimizer, schedule
