"""Importance on a Hugging Face model whose heads attnlens cannot ablate: nothing is guessed,
only what needs no ablation (Voita's confidence) is measured, and the notes say why."""

from __future__ import annotations

from pathlib import Path

import torch

from attnlens.analysis.experiments.importance import measure_importance
from attnlens.model.lenses.hf.lens import HFLens
from helpers.hf_zoo import camembert_folder


def test_an_architecture_whose_projection_is_not_known_gets_confidence_only(
    tmp_path: Path,
) -> None:
    camembert = HFLens(camembert_folder(tmp_path), torch.device("cpu"), name="tiny-camembert")
    result = measure_importance(camembert, n=2)
    assert result.heads["importance"].isna().all() and result.heads["confidence"].notna().all()
    assert any("only Voita's confidence" in note and "camembert" in note for note in result.notes)
