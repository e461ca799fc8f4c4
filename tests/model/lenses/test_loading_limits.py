"""Loading under limits: one slow load does not hold up loads of other models, the model
size is known before anything is built, and the Python API answers wrong types with an
InputError."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from attnlens import InputError, load
from attnlens.model.budget import SettingError, budget_bytes, model_budget_bytes
from attnlens.model.lenses import registry
from attnlens.model.net.checkpoint import model_bytes
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.transformer import Transformer
from helpers.parts import projections


def test_a_stuck_load_does_not_block_loading_another_model(
    tiny_model_dir: Path, tiny_lm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, entered = threading.Event(), threading.Event()
    real = registry._our_model

    def slow_for_the_tiny_model(folder: Path, device: torch.device, name: str | None = None) -> Any:
        if folder == tiny_model_dir:
            entered.set()
            release.wait(30)  # a load that takes long: 100000 layers, a slow disk, a hub
        return real(folder, device, name)

    monkeypatch.setattr(registry, "_our_model", slow_for_the_tiny_model)
    stuck = threading.Thread(target=load, args=(str(tiny_model_dir), "cpu"), daemon=True)
    stuck.start()
    assert entered.wait(30)
    start = time.monotonic()
    try:
        other = load(str(tiny_lm_dir), device="cpu")  # waited for the stuck load before
        took = time.monotonic() - start
    finally:
        release.set()
        stuck.join(30)
    assert other.info.architecture == "decoder" and took < 10, took
    assert not registry._loads  # no lock is kept once its loads are done


def test_the_same_model_loads_once_at_a_time(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside, most = 0, 0
    lock = threading.Lock()
    real = registry._our_model

    def counting(folder: Path, device: torch.device, name: str | None = None) -> Any:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.2)
        with lock:
            inside -= 1
        return real(folder, device, name)

    monkeypatch.setattr(registry, "_our_model", counting)
    threads = [threading.Thread(target=load, args=(str(tiny_model_dir), "cpu")) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert most == 1


@pytest.mark.parametrize(
    "config",
    [TransformerConfig(13, 13, N=2, d_model=16, d_ff=32, h=2, max_len=24),
     TransformerConfig(41, 41, N=2, d_model=64, d_ff=256, h=4, max_len=64),
     TransformerConfig(37, 37, N=3, d_model=64, d_ff=256, h=4, max_len=128,
                       share_embeddings=False)],
)  # fmt: skip
def test_the_size_estimate_is_what_the_model_takes(config: TransformerConfig) -> None:
    for net, architecture in ((Transformer(config), "encoder-decoder"),
                              (DecoderOnlyTransformer(config), "decoder")):  # fmt: skip
        tensors = [*net.parameters(), *net.buffers()]  # tied weights once
        assert model_bytes(config, architecture) == sum(t.numel() for t in tensors) * 4


def test_limits_must_be_positive_megabytes() -> None:
    for bad in ("inf", "nan", "-1", "0", "lots", "1e99"):
        for read, name in ((budget_bytes, "ATTNLENS_MAX_RECORD_MB"),
                           (model_budget_bytes, "ATTNLENS_MAX_MODEL_MB")):  # fmt: skip
            with pytest.raises(SettingError, match=rf"^{name} must be .* got '{bad}'$"):
                read({name: bad})
    assert model_budget_bytes({"ATTNLENS_MAX_MODEL_MB": "100"}) == 100 * 2**20
    assert model_budget_bytes({}) > 2**30  # half of this machine's memory


@pytest.mark.parametrize(
    "call",
    [lambda lens: lens.trace(None), lambda lens: lens.trace(b"ab"),
     lambda lens: lens.trace("ab", target=3), lambda lens: lens.trace("a\udcffb"),
     lambda lens: lens.decode(None), lambda lens: lens.decode("ab", ablate=[5]),
     lambda lens: lens.decode("ab", ablate=5), lambda lens: lens.decode("ab", strategy=7),
     lambda lens: lens.decode("ab", "beam", length_penalty="x"),
     lambda lens: lens.decode("ab", force=[1]), lambda lens: lens.decode("ab", seed="x"),
     lambda lens: lens.decode("ab", "sample", temperature=1e-40),
     lambda lens: lens.decode("ab", "sample", top_p=1e-46),
     lambda lens: projections(lens).head_projections(lens.trace("ab"), "sideways", 0, 0),
     lambda lens: projections(lens).head_projections(lens.trace("ab"), "cross", "0", 0)],
)  # fmt: skip
def test_wrong_argument_types_are_input_errors(tiny_model_dir: Path, call: Any) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError) as refused:
        call(lens)
    assert str(refused.value) and "\n" not in str(refused.value)
