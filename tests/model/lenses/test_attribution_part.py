"""The `attribution` part (which heads wrote a token), through the lens as a front end reads it:
on lm, induction, translate, two zoo causal LMs and a zoo encoder-decoder, the parts sum to the
logit (≤ 1e-4) at a decode run's steps, for the token decoded and for another candidate, and the
logit's log-probability is the one the run recorded; text + target reads the same; a model
without the part says why; and the memory budget refuses before the forward pass."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.parts import Attribution
from attnlens.model.lenses.registry import load
from attnlens.record.errors import InputError
from helpers.hf_zoo import variant, zoo_folder

OWN = ("lm", "induction", "translate")
ZOO = ("gpt2", "llama", "t5")


@functools.cache
def lens_of(name: str) -> Lens:
    if name in ZOO:
        return HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    return load(name, "cpu")


def part(lens: Lens) -> Attribution:
    found = lens.capabilities.attribution
    assert found is not None, lens.capabilities.reason("attribution")
    return found


def close(a: float, b: float, tol: float = 1e-4) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


@pytest.mark.parametrize("name", OWN + ZOO)
def test_the_parts_sum_to_the_logit_at_a_decode_runs_steps(name: str) -> None:
    lens = lens_of(name)
    run = lens.decode(lens.example, "beam", beam_size=2, max_len=4)
    attribution = part(lens)
    for step in range(len(run.steps)):
        for row in range(len(run.steps[step].candidates)):
            record = attribution.at_step(run, step, row=row)
            assert close(record.total, record.logit), (step, row, record.total, record.logit)
            beams = [b for b in run.steps[step].beams if (b.parent or 0) == row]
            top = run.steps[step].candidates[row][0]
            assert record.token == (beams[0].token if beams else top.token)
            if beams:
                assert close(record.logprob, beams[0].logprob), (step, row)
            other = run.steps[step].candidates[row][-1]  # the least likely candidate shown
            second = attribution.at_step(run, step, other.token, row)
            assert close(second.total, second.logit) and second.token == other.token
            assert second.logit <= record.logit + 1e-6 or other.token == record.token
    kinds = {"decoder_self", "cross"} if lens.capabilities.takes_target else {"decoder_self"}
    assert set(record.heads) == kinds
    assert record.heads["decoder_self"].shape == lens.info.shape("decoder_self")


@pytest.mark.parametrize("name", ["lm", "translate", "gpt2", "t5"])
def test_text_and_target_read_as_the_decode_run_does(name: str) -> None:
    """The first step of a greedy run is the text (an encoder-decoder's start token) read as
    `at_text` reads it: the same logit of the same token."""
    lens = lens_of(name)
    run = lens.decode(lens.example, max_len=2)
    attribution = part(lens)
    first = run.steps[0].beams[0].token
    by_step, by_text = attribution.at_step(run, 0), attribution.at_text(lens.example, first)
    assert by_text.tokens == by_step.tokens and by_text.token == first
    assert close(by_text.logit, by_step.logit, 1e-5)


def test_a_model_without_the_part_says_why(tmp_path: Path) -> None:
    bert = HFLens(zoo_folder("bert"), torch.device("cpu"), name="bert")
    assert bert.capabilities.attribution is None
    assert "writes no text" in bert.capabilities.reason("attribution")
    folder = variant("opt", tmp_path, {"do_layer_norm_before": False}, {})
    post = HFLens(folder, torch.device("cpu"), name="post-norm-opt")
    assert post.capabilities.attribution is None
    assert "do_layer_norm_before" in post.capabilities.reason("attribution")
    assert lens_of("lm").capabilities.reason("attribution") == ""


def test_bad_requests_are_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    lens = lens_of("lm")
    attribution = part(lens)
    run = lens.decode(lens.example, max_len=2)
    with pytest.raises(InputError, match="step 5 does not exist"):
        attribution.at_step(run, 5)
    with pytest.raises(InputError, match="not a token of lm's vocabulary"):
        attribution.at_step(run, 0, "no such token")
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "0.001")
    with pytest.raises(InputError, match=r"direct logit attribution.*ATTNLENS_MAX_RECORD_MB"):
        attribution.at_step(run, 1)
    gpt2 = lens_of("gpt2")
    token = gpt2.names[0]  # type: ignore[attr-defined]
    with pytest.raises(InputError, match=r"direct logit attribution.*ATTNLENS_MAX_RECORD_MB"):
        part(gpt2).at_text(gpt2.example, token)
