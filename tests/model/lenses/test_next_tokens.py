"""Each position's likeliest next tokens (Lens.next_tokens): the softmax of the model's own
logits, recomputed here independently, on our lm and on Hugging Face decoder-only models."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlens import InputError
from attnlens.model.lenses.causal import CausalLens
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.next_tokens import MAX_TOP
from attnlens.model.net.masks import causal_mask
from helpers.hf_zoo import zoo_folder, zoo_reference
from helpers.parts import predictor

TEXT = "the cat sat on the mat"


def expected_top(probs: torch.Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(T, k) probabilities and ids, sorted by hand (not topk): the reference ranking."""
    order = torch.argsort(probs, dim=-1, descending=True, stable=True)[:, :k]  # (T, k)
    return probs.gather(-1, order).numpy(), order.numpy()


def test_lm_next_tokens_are_the_softmax_of_its_own_output(lm: CausalLens) -> None:
    k = 4
    nt = predictor(lm).next_tokens(TEXT, k)
    tr = lm.trace(TEXT)
    assert nt.tokens == tr.tgt_tokens and nt.k == k
    ids = torch.tensor([[lm.tokenizer.index[t] for t in tr.tgt_tokens]])  # (1, T)
    with torch.inference_mode():
        probs = lm.net(ids, causal_mask(ids.size(1), 0, ids.device))[0].exp()  # (T, V)
    want_p, want_ids = expected_top(probs, k)
    np.testing.assert_allclose(nt.top_probs, want_p, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(nt.top_ids, want_ids)
    assert nt.top_tokens == tuple(
        tuple(lm.tokenizer.token(int(j)) for j in row) for row in want_ids
    )
    assert np.all(np.diff(nt.top_probs, axis=1) <= 0)
    # the trace's log-probability of the character that follows agrees where it is ranked
    following = [*tr.tgt_tokens[1:], "</s>"]
    assert tr.tgt_logprobs is not None
    for i, token in enumerate(following):
        if token in nt.top_tokens[i]:
            rank = nt.top_tokens[i].index(token)
            assert nt.top_probs[i, rank] == pytest.approx(np.exp(tr.tgt_logprobs[i]), rel=1e-4)
        else:
            assert np.exp(tr.tgt_logprobs[i]) <= nt.top_probs[i, -1] + 1e-6


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_hf_next_tokens_are_the_softmax_of_the_reference_logits(name: str) -> None:
    lens = HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    model, _ = zoo_reference(name)  # loaded on its own, eager attention
    nt = predictor(lens).next_tokens(TEXT, 3)
    tr = lens.trace(TEXT)
    assert nt.tokens == tr.tgt_tokens
    ids = torch.tensor([[lens.vocab_ids[t] for t in tr.tgt_tokens]])  # (1, T)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0].double()  # (T, V)
    want_p, want_ids = expected_top(torch.softmax(logits, dim=-1), 3)
    np.testing.assert_allclose(nt.top_probs, want_p, rtol=1e-4, atol=1e-7)
    np.testing.assert_array_equal(nt.top_ids, want_ids)
    assert nt.top_tokens[2] == tuple(lens.names[int(j)] for j in want_ids[2])


@pytest.mark.parametrize("k", [0, MAX_TOP + 1, True, 2.0])
def test_a_k_out_of_range_is_refused_by_name(lm: CausalLens, k: object) -> None:
    with pytest.raises(InputError, match=f"1 to {MAX_TOP}"):
        predictor(lm).next_tokens(TEXT, k)  # type: ignore[arg-type]


def test_a_model_that_does_not_continue_text_says_so(hand_reverse: Lens) -> None:
    can = hand_reverse.capabilities
    assert can.predictor is None and "not a decoder-only model" in can.reason("predictor")


def test_empty_and_too_long_text_are_refused(lm: CausalLens) -> None:
    with pytest.raises(InputError, match="empty"):
        predictor(lm).next_tokens("")
    with pytest.raises(InputError, match=str(lm.max_tokens)):
        predictor(lm).next_tokens("a" * (lm.max_tokens + 1))
