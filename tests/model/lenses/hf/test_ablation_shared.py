"""Ablation on a Hugging Face model leaves the model every session shares as it was: its
weights are the same tensors with the same values after ablated runs and decodes, runs without
ablation at the same time give what they give alone, a model held in a notebook comes back
unchanged, and a copy too large for the memory budget is refused by its size."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

import attnlens
from attnlens.model.budget import RecordTooLargeError
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.token_runs import TokenBatch
from helpers.hf_models import in_memory, tiny_hf
from helpers.parts import ablation, runs

CPU = torch.device("cpu")
TEXTS = ("the cat sat on the mat", "hello world", "a dog sat on a log")


@functools.cache
def gpt2() -> HFLens:
    return HFLens(tiny_hf("gpt2"), CPU, name="tiny-gpt2")


def weights(model: torch.nn.Module) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Every parameter and buffer: the tensor itself, and a copy of its values."""
    named = [*model.named_parameters(), *model.named_buffers()]
    return {name: (t, t.detach().clone()) for name, t in named}


def assert_unchanged(model: torch.nn.Module, before: dict[str, tuple[torch.Tensor, torch.Tensor]]):
    after = dict([*model.named_parameters(), *model.named_buffers()])
    assert after.keys() == before.keys()
    for name, (tensor, values) in before.items():
        assert after[name] is tensor, name  # the same tensor, not one put in its place
        assert torch.equal(tensor, values), name


def test_ablated_runs_and_decodes_leave_the_shared_model_as_it_was() -> None:
    lens = gpt2()
    before = weights(lens.model)
    batch = TokenBatch([runs(lens).token_ids(t) for t in TEXTS])
    plain = runs(lens).run_tokens(batch)
    every_head = [HeadRef("decoder_self", layer, head) for layer in range(2) for head in range(2)]
    ablated = ablation(lens).run_tokens(batch, every_head)
    lens.decode(TEXTS[0], strategy="beam", beam_size=3, max_len=4, ablate=["1.0", "0.1"])
    assert_unchanged(lens.model, before)
    again = runs(lens).run_tokens(batch)
    np.testing.assert_array_equal(again.logprobs, plain.logprobs)
    assert np.nanmax(np.abs(ablated.logprobs - plain.logprobs)) > 1e-6


def test_runs_without_ablation_beside_ablated_ones_give_what_they_give_alone() -> None:
    lens = gpt2()
    before = weights(lens.model)
    heads = [HeadRef("decoder_self", layer, head) for layer in range(2) for head in range(2)]
    batch = TokenBatch([runs(lens).token_ids(t) for t in TEXTS])
    work = [("plain", None), *[("ablated", h) for h in heads]] * 4
    trace_alone = lens.trace(TEXTS[0]).to_json()
    alone = {
        h: ablation(lens).run_tokens(batch, [] if h is None else [h]).logprobs for _, h in work
    }
    decode_alone = lens.decode(TEXTS[1], ablate=["1.1"], max_len=4).to_json()

    def call(item: tuple[str, HeadRef | None]) -> tuple[HeadRef | None, np.ndarray, str]:
        _, head = item
        run = ablation(lens).run_tokens(batch, [] if head is None else [head])
        other = lens.trace(TEXTS[0]) if head is None else lens.decode(TEXTS[1], ablate=["1.1"],
                                                                      max_len=4)  # fmt: skip
        return head, run.logprobs, other.to_json()

    with ThreadPoolExecutor(max_workers=6) as pool:
        for head, logprobs, record in pool.map(call, work):
            np.testing.assert_array_equal(logprobs, alone[head])
            assert record == (trace_alone if head is None else decode_alone)
    assert_unchanged(lens.model, before)


def test_a_model_held_in_a_notebook_comes_back_unchanged_after_ablation() -> None:
    model, tok = in_memory("bart")
    before = weights(model)
    training = [m.training for m in model.modules()]
    lens = attnlens.wrap(model, tok)
    run = lens.decode("the cat sat", max_len=3, ablate=["cross:0.1", "encoder_self:1.0"])
    assert run.params["ablate"] == ["cross:0.1", "encoder_self:1.0"]
    assert_unchanged(model, before)
    assert [m.training for m in model.modules()] == training


def test_a_copy_larger_than_the_budget_is_refused_naming_its_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lens = gpt2()
    ids = runs(lens).token_ids("hi")  # a short batch passes the record budget; the copy does not
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "0.0005")  # 524 bytes; W^O is 16 × 16 × 4
    with pytest.raises(RecordTooLargeError) as caught:
        ablation(lens).run_tokens(TokenBatch([ids]), [HeadRef("decoder_self", 0, 0)])
    message = str(caught.value)
    assert "output projections, 0.000977 MB" in message and "limit of 0.0005 MB" in message
    assert "ATTNLENS_MAX_RECORD_MB" in message
    assert np.isfinite(runs(lens).run_tokens(TokenBatch([ids])).logprobs).all()
