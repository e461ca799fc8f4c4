"""The decoder-only language model: its trace, its decoding, and what it learned."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlens import InputError, load
from attnlens.model.lenses.causal import CausalLens
from attnlens.model.lenses.registry import BUNDLED_DIR
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.training.corpus import CHARS, load_corpus
from attnlens.model.training.lm import perplexity
from attnlens.model.training.loop import TrainConfig, train
from attnlens.model.training.objectives import LanguageObjective


def test_trace_puts_text_on_the_decoder_side(lm: CausalLens) -> None:
    tr = lm.trace("abca")
    assert tr.model.architecture == "decoder" and tr.kinds == ("decoder_self",)
    assert tr.src_tokens == () and tr.tgt_tokens == ("<s>", "a", "b", "c", "a")
    assert tr.decoder_self is not None and tr.decoder_self.shape == (2, 2, 5, 5)
    assert np.all(np.triu(tr.decoder_self, 1) == 0)
    np.testing.assert_allclose(tr.decoder_self.sum(-1), 1.0, atol=1e-5)
    assert (
        tr.tgt_logprobs is not None
        and tr.tgt_logprobs.shape == (5,)
        and np.all(tr.tgt_logprobs < 0)
    )


def test_recorded_attention_equals_a_recomputation(lm: CausalLens) -> None:
    tr = lm.trace("bad cab")
    net = lm.net
    x = torch.tensor([[1, *lm.tokenizer.encode("bad cab").ids]])
    with torch.no_grad():
        h = net.tgt_embed(x) + net.positional(0, x.size(1))  # layer 0's input
        attn = net.layers[0].self_attn
        q = attn.split_heads(attn.w_q(h))
        k = attn.split_heads(attn.w_k(h))
        scores = q @ k.transpose(-2, -1) / math.sqrt(attn.d_k)
        causal = torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril()
        expected = scores.masked_fill(~causal, float("-inf")).softmax(-1)[0]
    assert tr.decoder_self is not None
    np.testing.assert_allclose(tr.decoder_self[0], expected.numpy(), atol=1e-6)


@pytest.mark.parametrize(
    "settings",
    [
        {"strategy": "greedy"},
        {"strategy": "beam", "beam_size": 3},
        {"strategy": "sample", "seed": 3, "top_p": 0.9},
    ],
)
def test_decoding_agrees_with_the_teacher_forced_trace(
    lm: CausalLens, settings: dict[str, object]
) -> None:
    run = lm.decode("ab", max_len=8, **settings)  # type: ignore[arg-type]
    tr = lm.trace("ab", target=run.output_text)
    P = 3  # <s> a b
    assert tr.tgt_tokens[P:] == tuple(t for t in run.output_tokens if t != "</s>")
    assert tr.tgt_logprobs is not None and tr.decoder_self is not None
    continuation = tr.tgt_logprobs[P - 1 :] if run.best.finished else tr.tgt_logprobs[P - 1 : -1]
    assert run.score == pytest.approx(float(continuation.sum()), abs=1e-4)
    path = run.path(run.best.step, run.best.beam)
    for step, beam in enumerate(path):
        row = run.steps[step].decoder_self_attention[:, :, beam.parent or 0]  # (L, H, P + step)
        np.testing.assert_allclose(row, tr.decoder_self[:, :, P - 1 + step, : P + step], atol=1e-5)


def test_beam_of_one_is_greedy_and_ablation_is_decoder_only(lm: CausalLens) -> None:
    greedy, beam = (
        lm.decode("ab", max_len=6),
        lm.decode("ab", strategy="beam", beam_size=1, max_len=6),
    )
    assert greedy.output_tokens == beam.output_tokens and greedy.score == pytest.approx(beam.score)
    ablated = lm.decode("ab", max_len=6, ablate=["1.0"])
    assert ablated.params["ablate"] == ["decoder_self:1.0"]
    assert ablated.score != pytest.approx(greedy.score)  # layer 1 head 0 no longer contributes
    with pytest.raises(InputError):
        lm.decode("ab", ablate=["cross:0.0"])


def test_bad_input_is_refused(lm: CausalLens) -> None:
    with pytest.raises(InputError, match="empty"):
        lm.trace("")
    with pytest.raises(InputError, match="at most 31"):
        lm.trace("a" * 40)
    with pytest.raises(InputError, match="no room"):
        lm.decode("a" * 31)


def test_a_short_run_lowers_the_loss(tmp_path: Path) -> None:
    v = len(CharTokenizer(CHARS))
    config = TransformerConfig(v, v, N=1, d_model=32, d_ff=64, h=2, max_len=128)
    train(
        LanguageObjective(),
        config,
        TrainConfig(steps=40, batch_size=8, warmup=20, eval_every=1000, snapshots=1),
        tmp_path,
        "cpu",
        False,
    )
    import json

    curve = json.loads((tmp_path / "config.json").read_text())["loss_curve"]
    assert sum(curve[-5:]) < 0.9 * sum(curve[:5])


@pytest.mark.skipif(
    not (BUNDLED_DIR / "lm" / "config.json").is_file(), reason="lm is not trained yet"
)
def test_bundled_lm_beats_the_unigram_baseline_clearly() -> None:
    lens = load("lm", device="cpu")
    assert isinstance(lens, CausalLens)
    corpus = load_corpus()
    result = perplexity(lens.net, lens.tokenizer, corpus.held_out, corpus.train)
    assert result.model < 0.4 * result.unigram, result
