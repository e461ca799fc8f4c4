"""A lens' optional parts (model/lenses/parts.py), each asserted present: what a test of a part
calls it through. A test of a model that lacks one asks `capabilities` instead."""

from __future__ import annotations

from typing import Any

from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.parts import (
    Ablation,
    Evaluation,
    Predictor,
    Projections,
    Samples,
    TaskModel,
    TokenRuns,
    Training,
)


def _part(lens: Lens, name: str) -> Any:
    can = lens.capabilities
    found = getattr(can, name)
    assert found is not None, f"{lens.name} has no {name}: {can.reason(name)}"
    return found


def runs(lens: Lens) -> TokenRuns:
    part: TokenRuns = _part(lens, "token_runs")
    return part


def ablation(lens: Lens) -> Ablation:
    part: Ablation = _part(lens, "ablation")
    return part


def samples(lens: Lens) -> Samples:
    part: Samples = _part(lens, "samples")
    return part


def task(lens: Lens) -> TaskModel:
    part: TaskModel = _part(lens, "task")
    return part


def evaluation(lens: Lens) -> Evaluation:
    part: Evaluation = _part(lens, "evaluation")
    return part


def training(lens: Lens) -> Training:
    part: Training = _part(lens, "training")
    return part


def predictor(lens: Lens) -> Predictor:
    part: Predictor = _part(lens, "predictor")
    return part


def projections(lens: Lens) -> Projections:
    part: Projections = _part(lens, "projections")
    return part


def why_no_ablation(lens: Lens) -> str | None:
    """None where heads can be ablated; else the reason the lens gives, fit to show."""
    can = lens.capabilities
    return None if can.ablation is not None else can.reason("ablation")
