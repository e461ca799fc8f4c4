"""A decoding step computes the logits it reads, the last position's, not every position's
(model/lenses/hf/stepper.py): at 8,192 tokens of a prompt on Llama-3.2's vocabulary every
position's would be 4.2 GB of float32."""

from __future__ import annotations

import functools

import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from helpers.hf_models import tiny_hf

PROMPT = "the cat sat on the mat because it was tired and the dog"


@functools.cache
def lens(kind: str) -> HFLens:
    return HFLens(tiny_hf(kind), torch.device("cpu"))


@pytest.mark.parametrize("kind", ["gpt2", "llama", "mistral"])
def test_the_output_layer_sees_one_position_a_step(kind: str) -> None:
    """Every call of the output layer, the prompt's first feed included, gets one position: the
    captured prefill and the eager steps after it both ask for the last logits only."""
    the_lens = lens(kind)
    seen: list[int] = []
    head = the_lens.model.get_output_embeddings()
    hook = head.register_forward_hook(lambda _m, args, _out: seen.append(args[0].shape[1]))
    try:
        run = the_lens.decode(PROMPT, "greedy", max_len=4)
    finally:
        hook.remove()
    assert len(seen) >= 2 and set(seen) == {1}, seen
    assert len(run.output_tokens) >= 1


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_the_last_logits_are_those_of_a_full_forward_pass(kind: str) -> None:
    """What a step reads is unchanged: the greedy choice after the prompt is the argmax of the
    last row of the model's own full logits."""
    the_lens = lens(kind)
    _, prefix, _ = the_lens._decode_inputs(PROMPT)
    ids = torch.tensor([list(prefix)])
    with torch.inference_mode():
        full = the_lens.model(input_ids=ids).logits[0, -1]  # (V,)
    run = the_lens.decode(PROMPT, "greedy", max_len=1)
    assert the_lens.vocab_ids[run.output_tokens[0]] == int(full.argmax())
