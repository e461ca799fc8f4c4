"""attnlens.wrap over tiny models held in memory (BERT, GPT-2 and BART; T5 and Marian, whose
encoder and decoder keep their own configs; RoBERTa, Llama and Mistral): the attention equals
the models' own output_attentions, the same records and decoding as the model loaded from a
folder, no copy of the weights, and the model exactly as it was after every call."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import transformers as T

import attnlens
from attnlens.model.lenses.hf.eager import configs_of
from attnlens.record.errors import InputError
from attnlens.record.trace import Trace
from helpers.hf_models import in_memory

TEXT = "the cat sat on the mat"
TARGET = "hello world"
KINDS = ("bert", "gpt2", "bart", "t5", "marian", "roberta", "llama", "mistral")


def state(model: torch.nn.Module) -> tuple[list[object], list[bool]]:
    """Every config's attention implementation and every module's training flag."""
    assert isinstance(model, T.PreTrainedModel)
    implementations = [c._attn_implementation for c in configs_of(model)]
    return implementations, [m.training for m in model.modules()]


def reference_attention(model: T.PreTrainedModel, tok: Any, trace: Trace) -> dict[str, Any]:
    """The model's own output_attentions on the trace's tokens, from an independent eager copy."""
    ref = copy.deepcopy(model)
    ref.set_attn_implementation("eager")
    ref.eval()
    ids = lambda tokens: torch.tensor([tok.convert_tokens_to_ids(list(tokens))])  # noqa: E731
    with torch.no_grad():
        if trace.model.architecture == "encoder-decoder":
            out = ref(input_ids=ids(trace.src_tokens), decoder_input_ids=ids(trace.tgt_tokens),
                      output_attentions=True)  # fmt: skip
            return {"encoder_self": out.encoder_attentions, "decoder_self": out.decoder_attentions,
                    "cross": out.cross_attentions}  # fmt: skip
        tokens = trace.src_tokens or trace.tgt_tokens
        out = ref(input_ids=ids(tokens), output_attentions=True)
    return {trace.kinds[0]: out.attentions}


@pytest.mark.parametrize("kind", KINDS)
def test_wrapped_attention_is_the_models_own_and_the_model_is_restored(kind: str) -> None:
    model, tok = in_memory(kind)
    before = state(model)
    assert before[0][0] == "sdpa" and model.training  # as a notebook holds it
    lens = attnlens.wrap(model, tok)
    trace = lens.trace(TEXT, TARGET if kind in ("bart", "t5", "marian") else None)
    assert state(model) == before
    want = reference_attention(model, tok, trace)
    assert set(trace.kinds) == set(want)
    for name, per_layer in want.items():
        expected = torch.stack([a[0] for a in per_layer]).numpy()  # (L, H, Q, K)
        np.testing.assert_allclose(trace.attention(name), expected, atol=1e-6)
    if trace.model.architecture != "encoder":
        lens.decode(TEXT, "beam", beam_size=2, max_len=4)
        assert state(model) == before
    attnlens.head_heatmap(trace, trace.kinds[0], 0, 0)  # the same figures


@pytest.mark.parametrize("kind", ("gpt2", "bart"))
def test_wrapped_model_gives_what_the_same_model_loaded_from_a_folder_gives(
    kind: str, tmp_path: Path
) -> None:
    model, tok = in_memory(kind)
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    wrapped, loaded = attnlens.wrap(model, tok), attnlens.load(str(tmp_path), device="cpu")
    a, b = wrapped.trace(TEXT), loaded.trace(TEXT)
    assert (a.src_tokens, a.tgt_tokens, a.kinds) == (b.src_tokens, b.tgt_tokens, b.kinds)
    for name in a.kinds:
        np.testing.assert_allclose(a.attention(name), b.attention(name), atol=1e-6)
        np.testing.assert_array_equal(a.mask(name), b.mask(name))
    np.testing.assert_allclose(a.tgt_logprobs, b.tgt_logprobs, atol=1e-5)
    for strategy, settings in (("greedy", {}), ("beam", {"beam_size": 3})):
        x = wrapped.decode(TEXT, strategy, max_len=6, **settings)
        y = loaded.decode(TEXT, strategy, max_len=6, **settings)
        assert x.output_tokens == y.output_tokens
        assert x.score == pytest.approx(y.score, abs=1e-5)


def test_the_lens_shares_the_weights_rather_than_copying_them() -> None:
    model, tok = in_memory("bert")
    lens = attnlens.wrap(model, tok)
    first = lens.trace(TEXT).encoder_self
    with torch.no_grad():
        model.encoder.layer[0].attention.self.query.weight.mul_(4.0)  # sharper first layer
    after = lens.trace(TEXT).encoder_self
    assert first is not None and after is not None
    assert not np.allclose(first[0], after[0])
    np.testing.assert_allclose(first[1:].sum(-1), after[1:].sum(-1), atol=1e-5)


def test_a_failing_call_restores_the_model_too() -> None:
    model, tok = in_memory("gpt2")
    before = state(model)
    lens = attnlens.wrap(model, tok)
    with pytest.raises(InputError, match="at most 40"):
        lens.trace("the cat " * 40)
    with pytest.raises(InputError, match="does not exist"):
        lens.decode(TEXT, ablate=["0.7"])
    assert state(model) == before


def test_calls_from_many_threads_give_the_serial_results_and_leave_the_model_as_it_was() -> None:
    model, tok = in_memory("bart")
    before = state(model)
    lens, other = attnlens.wrap(model, tok), attnlens.wrap(model, tok)  # two lenses, one model
    texts = ["the cat", "hello world", "a dog sat on a log", "the mat"]
    serial = [lens.trace(t).cross for t in texts]
    with ThreadPoolExecutor(4) as pool:
        lenses = [lens if i % 2 else other for i in range(len(texts) * 3)]
        futures = [pool.submit(x.trace, t) for x, t in zip(lenses, texts * 3, strict=True)]
        results = [f.result().cross for f in futures]
    for i, cross in enumerate(results):
        np.testing.assert_array_equal(cross, serial[i % len(texts)])
    assert state(model) == before


def test_a_model_moved_after_wrapping_is_refused() -> None:
    model, tok = in_memory("bert")
    lens = attnlens.wrap(model, tok)
    model.to("meta")
    with pytest.raises(InputError, match="moved from cpu to meta"):
        lens.trace(TEXT)


class Pipeline:
    def __init__(self, model: object, tokenizer: object) -> None:
        self.model, self.tokenizer = model, tokenizer


class StuckGPT2(T.GPT2LMHeadModel):
    """A model whose attention transformers will not switch (custom attention code)."""

    _can_set_attn_implementation_cached_value = False


def test_what_cannot_be_wrapped_is_refused_by_name() -> None:
    model, tok = in_memory("gpt2")
    with pytest.raises(InputError, match=r"attnlens.wrap\(pipe.model, pipe.tokenizer\)"):
        attnlens.wrap(Pipeline(model, tok), tok)
    with pytest.raises(InputError, match="not a Linear"):
        attnlens.wrap(torch.nn.Linear(2, 2), tok)
    with pytest.raises(InputError, match="text tokenizer"):
        attnlens.wrap(model, None)
    headless = T.GPT2Model(model.config)
    with pytest.raises(InputError, match=r"GPT2Model has no language-model head.*from_hf"):
        attnlens.wrap(headless, tok)
    small = T.GPT2LMHeadModel(T.GPT2Config(vocab_size=10, n_embd=8, n_layer=1, n_head=2))
    with pytest.raises(InputError, match=f"tokenizer has {len(tok)} tokens but .* holds 10"):
        attnlens.wrap(small, tok)
    vit = T.ViTModel(T.ViTConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=8, image_size=8, patch_size=4))  # fmt: skip
    with pytest.raises(InputError, match="ViTModel reads pixel_values, not text"):
        attnlens.wrap(vit, tok)
    stuck = StuckGPT2(model.config)
    before = state(stuck)
    with pytest.raises(InputError, match="StuckGPT2 cannot be switched to eager attention"):
        attnlens.wrap(stuck, tok)
    assert state(stuck) == before
