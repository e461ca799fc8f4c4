"""Where models run: device names are checked, and on a CUDA GPU a bundled model traces and
decodes as on the CPU (skipped, with the reason, on a machine without one)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlens.model.lenses.registry import load
from attnlens.model.net.device import device_name, pick_device
from attnlens.record.errors import InputError
from helpers.apptest import require_bundled

HAS_CUDA = torch.cuda.is_available()
NO_CUDA = "no CUDA GPU on this machine (torch.cuda.is_available() is False): CPU only"
TEXTS = {"reverse": "Hello, World!", "sort": "Mississippi", "dates": "SAT 21 Nov 2026",
         "translate": "The cat sees a house.", "lm": "The class "}  # fmt: skip


def test_cpu_and_auto() -> None:
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device("auto").type == ("cuda" if HAS_CUDA else "cpu")
    assert device_name(torch.device("cpu")) == "CPU"


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "CUDA", "cuda:-1", "mps:0", ""])
def test_unknown_devices_are_refused_by_name(bad: str) -> None:
    with pytest.raises(InputError, match="device must be auto, cpu, cuda or cuda:N"):
        pick_device(bad)


def test_a_gpu_the_machine_lacks_is_refused() -> None:
    missing = f"cuda:{torch.cuda.device_count()}"  # one past the last, or cuda:0 with none
    with pytest.raises(InputError, match=r"no CUDA GPU is available|does not exist"):
        pick_device(missing)


@pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA)
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_trace_on_cuda_equals_the_cpu_trace(name: str) -> None:
    require_bundled(name)
    cpu, gpu = load(name, device="cpu"), load(name, device="cuda")
    a, b = cpu.trace(TEXTS[name]), gpu.trace(TEXTS[name])
    assert a.src_tokens == b.src_tokens and a.tgt_tokens == b.tgt_tokens
    for kind in a.kinds:
        np.testing.assert_allclose(getattr(b, kind), getattr(a, kind), atol=1e-5, err_msg=kind)
    np.testing.assert_allclose(b.tgt_logprobs, a.tgt_logprobs, atol=1e-4)


@pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA)
@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize(
    "settings",
    [{}, {"strategy": "beam", "beam_size": 4}, {"strategy": "sample", "seed": 7, "top_k": 5}],
)
def test_decoding_on_cuda_gives_the_cpu_tokens(name: str, settings: dict[str, object]) -> None:
    require_bundled(name)
    cpu, gpu = load(name, device="cpu"), load(name, device="cuda")
    a = cpu.decode(TEXTS[name], **settings)  # type: ignore[arg-type]
    b = gpu.decode(TEXTS[name], **settings)  # type: ignore[arg-type]
    assert b.output_tokens == a.output_tokens
    assert b.score == pytest.approx(a.score, abs=1e-4)
