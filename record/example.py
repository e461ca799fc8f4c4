"""An example of a task with a known answer: what the task models are trained on and measured
against, and what `Lens.reference` gives for a typed text (docs/python.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """A source, its target, and for each target token the source token it comes from."""

    source: str
    target: str
    alignment: tuple[int, ...]  # one per target token: the index of its source token
