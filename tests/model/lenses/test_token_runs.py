"""Lens.run_tokens (what the head experiments run on): the attention and log-probabilities of
a padded batch equal each sequence's own trace; Hugging Face models refuse ablation by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.registry import load
from attnlens.model.lenses.token_runs import TokenBatch
from attnlens.record.errors import InputError
from helpers.hf_models import tiny_hf
from helpers.parts import ablation, runs, why_no_ablation


def test_a_decoders_padded_batch_equals_each_trace(lm: Lens) -> None:
    texts = ["abc ab.", "hg"]
    run = runs(lm).run_tokens(TokenBatch([runs(lm).token_ids(t) for t in texts]))
    assert run.decoder_self is not None and run.logprobs is not None and run.top is not None
    for b, text in enumerate(texts):
        tr = lm.trace(text)
        T = len(tr.tgt_tokens)
        assert tr.decoder_self is not None and tr.tgt_logprobs is not None
        np.testing.assert_allclose(run.decoder_self[b, :, :, :T, :T], tr.decoder_self, atol=1e-6)
        np.testing.assert_allclose(run.logprobs[b, : T - 1], tr.tgt_logprobs[:-1], atol=1e-5)
        assert np.isnan(run.logprobs[b, T - 1 :]).all() and (run.top[b, T:] == -1).all()
    assert np.isnan(run.decoder_self[1, :, :, 3:]).all()  # the short one's padded queries


def test_an_encoder_decoders_batch_equals_the_teacher_forced_trace(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    space = runs(lens).token_space()
    assert space.start is not None and space.suffix == (space.names.index("</s>"),)
    pairs = [("bad cafe", "fed"), ("ab", "hgfedcb")]
    run = runs(lens).run_tokens(
        TokenBatch(
            [(space.start, *runs(lens).token_ids(t)) for _, t in pairs],
            [runs(lens).token_ids(s) for s, _ in pairs],
        )
    )
    for b, (source, target) in enumerate(pairs):
        tr = lens.trace(source, target)
        S, T = len(tr.src_tokens), len(tr.tgt_tokens)
        for kind, rows, cols in (("encoder_self", S, S), ("decoder_self", T, T), ("cross", T, S)):
            got = getattr(run, kind)[b, :, :, :rows, :cols]
            np.testing.assert_allclose(got, tr.attention(kind), atol=1e-6)
        assert run.logprobs is not None and tr.tgt_logprobs is not None
        np.testing.assert_allclose(run.logprobs[b, :T], tr.tgt_logprobs, atol=1e-5)


def test_ablating_a_head_zeroes_it_as_decoding_does(lm: Lens) -> None:
    ids = runs(lm).token_ids("abc")
    plain = runs(lm).run_tokens(TokenBatch([ids]))
    ablated = ablation(lm).run_tokens(TokenBatch([ids]), [HeadRef("decoder_self", 0, 1)])
    assert plain.logprobs is not None and ablated.logprobs is not None
    assert not np.allclose(plain.logprobs, ablated.logprobs)
    run = lm.decode("abc", ablate=["decoder_self:0.1"], max_len=1)
    step = run.steps[0].beams[0]
    top = int(ablated.top[0, -1]) if ablated.top is not None else -1
    assert runs(lm).token_space().names[top] == step.token  # the step loop chose the same token


@pytest.mark.parametrize(
    ("rows", "message"),
    [([[]], "none of them empty"), ([[10_000]], "outside the vocabulary"),
     ([list(range(4, 10)) * 10], "longer than")],
)  # fmt: skip
def test_bad_ids_are_refused_with_the_limit(lm: Lens, rows: list[list[int]], message: str) -> None:
    with pytest.raises(InputError, match=message):
        runs(lm).run_tokens(TokenBatch(rows))


def test_a_hugging_face_decoder_runs_and_ablates_its_heads() -> None:
    lens = HFLens(tiny_hf("gpt2"), torch.device("cpu"), name="tiny-gpt2")
    text = "the cat sat on the mat"
    run = runs(lens).run_tokens(
        TokenBatch([runs(lens).token_ids(text), runs(lens).token_ids("hello world")])
    )
    tr = lens.trace(text)
    T = len(tr.tgt_tokens)
    assert tr.decoder_self is not None and run.decoder_self is not None
    np.testing.assert_allclose(run.decoder_self[0, :, :, :T, :T], tr.decoder_self, atol=1e-5)
    assert why_no_ablation(lens) is None  # W^O's share of the head zeroed (hf/ablation.py)
    ablated = ablation(lens).run_tokens(
        TokenBatch([runs(lens).token_ids(text)]), [HeadRef("decoder_self", 0, 0)]
    )
    assert run.logprobs is not None and ablated.logprobs is not None
    assert not np.array_equal(ablated.logprobs[0, : T - 1], run.logprobs[0, : T - 1])
    with pytest.raises(InputError, match="does not exist"):
        ablation(lens).run_tokens(
            TokenBatch([runs(lens).token_ids(text)]), [HeadRef("decoder_self", 0, 7)]
        )
    assert lens.fingerprint() == lens.fingerprint() and lens.fingerprint().startswith("tiny-gpt2@")


def test_a_hugging_face_encoder_gives_attention_only() -> None:
    lens = HFLens(tiny_hf("bert"), torch.device("cpu"), name="tiny-bert")
    space = runs(lens).token_space()
    assert space.prefix and space.suffix  # [CLS] … [SEP]
    ids = runs(lens).token_ids("hello world")
    assert ids[: len(space.prefix)] == space.prefix and ids[-len(space.suffix) :] == space.suffix
    run = runs(lens).run_tokens(TokenBatch([ids]))
    tr = lens.trace("hello world")
    assert run.logprobs is None and run.encoder_self is not None
    np.testing.assert_allclose(run.encoder_self[0], tr.encoder_self, atol=1e-5)


def test_a_wrapped_model_runs_with_its_own_attention_and_is_named_by_its_weights() -> None:
    import attnlens
    from helpers.hf_models import in_memory

    model, tok = in_memory("gpt2")
    lens = attnlens.wrap(model, tok)
    text = "the cat sat on the mat"
    run = runs(lens).run_tokens(TokenBatch([runs(lens).token_ids(text)]))
    tr = lens.trace(text)
    T = len(tr.tgt_tokens)
    assert run.decoder_self is not None and tr.decoder_self is not None
    np.testing.assert_allclose(run.decoder_self[0, :, :, :T, :T], tr.decoder_self, atol=1e-5)
    before = lens.fingerprint()
    with torch.no_grad():
        next(model.parameters()).add_(1.0)  # the notebook changes the weights in place
    assert lens.fingerprint() != before  # so a cached result of the old weights is not reused
