"""Loading Hugging Face models: kind detection, safetensors only unless opted in, no remote
code, offline behaviour, and the registry's fallback."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import attnlens
from attnlens.model.lenses.hf.architecture import detect_architecture
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.loading import load_config
from attnlens.record.errors import InputError, ModelNotFoundError
from helpers.hf_models import KINDS, tiny_hf

CPU = torch.device("cpu")
EXPECTED_KIND = {
    "bert": "encoder",
    "gpt2": "decoder",
    "bart": "encoder-decoder",
    "marian": "encoder-decoder",
    "t5": "encoder-decoder",
}


@pytest.mark.parametrize("kind", KINDS)
def test_the_kind_is_read_from_the_config(kind: str) -> None:
    assert detect_architecture(load_config(tiny_hf(kind))) == EXPECTED_KIND[kind]


def test_a_bare_decoder_config_without_lm_head_is_still_a_decoder(tmp_path: Path) -> None:
    config = json.loads((tiny_hf("gpt2") / "config.json").read_text())
    config["architectures"] = ["GPT2Model"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert detect_architecture(load_config(tmp_path)) == "decoder"


def pickle_only(tmp_path: Path) -> Path:
    """The tiny BERT with its weights as pytorch_model.bin instead of safetensors."""
    folder = tmp_path / "pickled"
    shutil.copytree(tiny_hf("bert"), folder)
    weights = load_file(folder / "model.safetensors")
    (folder / "model.safetensors").unlink()
    torch.save(weights, folder / "pytorch_model.bin")
    return folder


def test_a_pickle_only_checkpoint_is_refused_unless_the_caller_opts_in(tmp_path: Path) -> None:
    folder = pickle_only(tmp_path)
    with pytest.raises(InputError) as refused:
        HFLens(folder, CPU)
    message = str(refused.value)
    assert str(folder) in message and "pytorch_model.bin" in message
    assert "allow_pickle=True" in message
    with pytest.raises(InputError, match="pickle"):
        attnlens.load(str(folder))  # the registry's fallback is just as safe
    opted_in = HFLens(folder, CPU, allow_pickle=True).trace("the cat")
    safe = HFLens(tiny_hf("bert"), CPU).trace("the cat")
    assert np.array_equal(opted_in.encoder_self, safe.encoder_self)


def test_a_folder_without_weights_is_refused(tmp_path: Path) -> None:
    shutil.copy(tiny_hf("bert") / "config.json", tmp_path / "config.json")
    with pytest.raises(InputError, match="no model weights"):
        HFLens(tmp_path, CPU)


def test_a_model_needing_its_own_code_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "custom"
    shutil.copytree(tiny_hf("bert"), folder)
    config = {"model_type": "attnlens-custom", "auto_map": {"AutoModel": "modeling.Custom"}}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "modeling.py").write_text("raise SystemExit('remote code ran')\n")
    with pytest.raises(InputError, match="never does"):
        HFLens(folder, CPU)


def test_offline_an_uncached_hub_id_fails_fast(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    began = time.monotonic()
    with pytest.raises(ModelNotFoundError, match="HF_HUB_OFFLINE"):
        HFLens("attnlens-test/not-a-model", CPU, cache_dir=tmp_path)
    with pytest.raises(ModelNotFoundError, match="bundled names"):
        attnlens.load("attnlens-test/not-a-model")
    assert time.monotonic() - began < 5


def test_offline_a_cached_hub_id_loads_from_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = tmp_path / "models--attnlens-test--tiny-bert"
    revision = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    shutil.copytree(tiny_hf("bert"), repo / "snapshots" / revision)
    lens = HFLens("attnlens-test/tiny-bert", CPU, cache_dir=tmp_path)
    assert lens.folder == repo / "snapshots" / revision
    assert lens.trace("the cat").src_tokens[0] == "[CLS]"


@pytest.mark.parametrize("kind", ["bert", "bart"])
def test_the_registry_falls_back_to_hugging_face_for_a_model_folder(kind: str) -> None:
    lens = attnlens.load(str(tiny_hf(kind)), device="cpu")
    assert isinstance(lens, HFLens)
    assert lens.info.architecture == EXPECTED_KIND[kind]


def test_a_folder_that_is_no_model_is_still_not_found(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError):
        attnlens.load(str(tmp_path))
