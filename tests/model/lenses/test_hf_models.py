"""The tiny Hugging Face models the HF tests use (tests/helpers/hf_models.py) are what they
claim: safetensors folders naming their model_type."""

from __future__ import annotations

import json

import pytest

from helpers.hf_models import KINDS, tiny_hf


@pytest.mark.parametrize("kind", KINDS)
def test_tiny_models_are_saved_as_safetensors_with_a_model_type(kind: str) -> None:
    folder = tiny_hf(kind)
    assert (folder / "model.safetensors").is_file()
    assert not list(folder.glob("*.bin"))
    assert json.loads((folder / "config.json").read_text())["model_type"] == kind
