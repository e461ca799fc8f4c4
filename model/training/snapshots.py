"""Training snapshots saved beside a model: snapshots/step-NNNNNN/, each a loadable model.

For models trained on one of our tasks, `score_snapshots` measures each snapshot on held-out
examples (exact match and every cross-attention head's alignment), so that a user can see when
the alignment appears and when the answers become right; `loss_curve` reads the training loss
the model's description keeps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlens.model.net import checkpoint
from attnlens.model.net.checkpoint import DESCRIPTION
from attnlens.model.training.evaluate import evaluate
from attnlens.model.training.tasks import TASKS, get_task

_STEP = re.compile(r"^step-(\d+)$")
SCORE_SEED = 40_404  # held-out examples for snapshot scores: not a training or test seed
SCORE_EXAMPLES = 200


@dataclass(frozen=True)
class Snapshot:
    """The model as it was after `step` training steps."""

    step: int
    path: Path


@dataclass(frozen=True)
class SnapshotScore:
    """How a snapshot does on held-out examples of its task."""

    step: int
    exact: float  # share of greedy outputs equal to the reference
    head_alignment: np.ndarray  # (N, h): share of target tokens each head aligns correctly

    @property
    def best_alignment(self) -> float:
        return float(self.head_alignment.max())


def snapshots(folder: Path) -> list[Snapshot]:
    """A model folder's snapshots, earliest first; [] when it has none."""
    root = folder / "snapshots"
    if not root.is_dir():
        return []
    found = []
    for sub in root.iterdir():
        match = _STEP.match(sub.name)
        if match and (sub / DESCRIPTION).is_file():
            found.append(Snapshot(int(match.group(1)), sub))
    return sorted(found, key=lambda s: s.step)


def scorable(task: object) -> bool:
    """Whether a task name is one we can generate held-out examples of."""
    return isinstance(task, str) and task in TASKS


def score_snapshots(
    found: Sequence[Snapshot], task: str, n: int = SCORE_EXAMPLES, seed: int = SCORE_SEED
) -> list[SnapshotScore]:
    """Every snapshot scored on the same n held-out examples of task (on the CPU)."""
    examples = get_task(task).examples(n, seed)
    scores = []
    for snap in found:
        net, tok, _ = checkpoint.load(snap.path, torch.device("cpu"))
        result = evaluate(net, tok, examples)
        scores.append(SnapshotScore(snap.step, result.exact, result.head_alignment))
    return scores


def loss_curve(description: Mapping[str, Any]) -> tuple[list[int], list[float]]:
    """(steps, training loss) as a model's description keeps it: about 200 points, each
    one training step's loss (not averaged); empty lists when there is none."""
    losses = [float(v) for v in description.get("loss_curve", [])]
    steps = description.get("loss_steps")
    if isinstance(steps, list) and len(steps) == len(losses) and all(type(s) is int for s in steps):
        return list(steps), losses
    total = int(description.get("training", {}).get("steps", len(losses)))
    stride = max(1, total // 200)  # how training thins the history
    return [1 + i * stride for i in range(len(losses))], losses
