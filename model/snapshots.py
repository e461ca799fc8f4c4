"""Training snapshots saved beside a model: snapshots/step-NNNNNN/, each a loadable model.

For models trained on one of our tasks, `score_snapshots` measures each snapshot on held-out
examples (exact match and every cross-attention head's alignment), so that a user can see when
the alignment appears and when the answers become right; `loss_curve` reads the training loss
the model's description keeps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model import checkpoint
from model.checkpoint import DESCRIPTION
from model.evaluate import evaluate
from model.registry import BUNDLED_DIR
from model.tasks import TASKS, get_task

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


def model_folder(name_or_path: str) -> Path:
    """The folder of a bundled model's name, or the path itself."""
    bundled = BUNDLED_DIR / name_or_path
    return bundled if name_or_path and bundled.is_dir() else Path(name_or_path).expanduser()


def snapshots(name_or_path: str) -> list[Snapshot]:
    """A bundled model's or a model folder's snapshots, earliest first; [] when it has none."""
    root = model_folder(name_or_path) / "snapshots"
    if not root.is_dir():
        return []
    found = []
    for sub in root.iterdir():
        match = _STEP.match(sub.name)
        if match and (sub / DESCRIPTION).is_file():
            found.append(Snapshot(int(match.group(1)), sub))
    return sorted(found, key=lambda s: s.step)


def task_of(name_or_path: str) -> str | None:
    """The task a model of ours was trained on, when it is one we can generate examples of."""
    folder = model_folder(name_or_path)
    if not (folder / DESCRIPTION).is_file():
        return None
    task = checkpoint.read_description(folder).get("task")
    return task if task in TASKS else None


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


def loss_curve(name_or_path: str) -> tuple[list[int], list[float]]:
    """(steps, training loss) as the model's description keeps it: about 200 points, each
    one training step's loss (not averaged); empty lists when there is none."""
    folder = model_folder(name_or_path)
    if not (folder / DESCRIPTION).is_file():
        return [], []
    description = checkpoint.read_description(folder)
    losses = [float(v) for v in description.get("loss_curve", [])]
    total = int(description.get("training", {}).get("steps", len(losses)))
    stride = max(1, total // 200)  # how train.py and train_lm.py thin the history
    return [1 + i * stride for i in range(len(losses))], losses
