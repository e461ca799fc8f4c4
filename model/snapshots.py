"""Training snapshots saved beside a model: snapshots/step-NNNNNN/, each a loadable model."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from model.checkpoint import DESCRIPTION
from model.registry import BUNDLED_DIR

_STEP = re.compile(r"^step-(\d+)$")


@dataclass(frozen=True)
class Snapshot:
    """The model as it was after `step` training steps."""

    step: int
    path: Path


def snapshots(name_or_path: str) -> list[Snapshot]:
    """A bundled model's or a model folder's snapshots, earliest first; [] when it has none."""
    bundled = BUNDLED_DIR / name_or_path
    folder = bundled if name_or_path and bundled.is_dir() else Path(name_or_path)
    root = folder.expanduser() / "snapshots"
    if not root.is_dir():
        return []
    found = []
    for sub in root.iterdir():
        match = _STEP.match(sub.name)
        if match and (sub / DESCRIPTION).is_file():
            found.append(Snapshot(int(match.group(1)), sub))
    return sorted(found, key=lambda s: s.step)
