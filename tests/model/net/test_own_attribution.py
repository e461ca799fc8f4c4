"""Direct logit attribution on our own decoders (post-norm, §3.1): the parts sum to the logit the
model's own forward pass gives, on the bundled lm, induction and translate, on random and on
sharp heads; it reads a decode run's step back; a silent head's part is exactly 0; and parts
that do not add up are refused, not shown."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlens.model.lenses.causal import CausalLens
from attnlens.model.lenses.registry import load
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.model.net import stream as stream_module
from attnlens.model.net.attribution import causal_attribution, seq2seq_attribution
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.masks import causal_mask, padding_mask
from attnlens.model.net.stream import MismatchError
from attnlens.model.net.transformer import Transformer
from attnlens.record.attribution import LogitAttribution
from helpers.handbuilt import SILENT, previous_token_lm
from helpers.sharp import sharpen
from helpers.tiny import tiny_transformer

DESCRIBED = {"model": "test", "token": "?"}


def _own_logits_causal(net: DecoderOnlyTransformer, ids: list[int], at: int) -> torch.Tensor:
    tokens = torch.tensor([ids])
    with torch.inference_mode():
        hidden = net.decode(tokens, causal_mask(len(ids), 0)).hidden
        return net.generator(hidden[0, at]).double()  # (V,)


def _own_logits_seq2seq(net: Transformer, src: list[int], ids: list[int], at: int) -> torch.Tensor:
    source, tokens = torch.tensor([src]), torch.tensor([ids])
    with torch.inference_mode():
        mask = padding_mask(source, -1)
        memory = net.encode(source, mask).memory
        hidden = net.decode(net.memory_kv(memory), mask, tokens, causal_mask(len(ids), 0)).hidden
        return net.generator(hidden[0, at]).double()


def _check(record: LogitAttribution, logits: torch.Tensor, token: int) -> None:
    """The parts sum to the model's own logit, and the record's logit and log-probability are
    the forward pass's."""
    want = float(logits[token])
    assert abs(record.total - want) <= 1e-4 * max(1.0, abs(want))
    assert abs(record.logit - want) <= 1e-5 * max(1.0, abs(want))
    assert abs(record.logprob - float(torch.log_softmax(logits, 0)[token])) <= 1e-5


@functools.cache
def bundled(name: str) -> CausalLens | Seq2SeqLens:
    lens = load(name, device="cpu")
    assert isinstance(lens, (CausalLens, Seq2SeqLens))
    return lens


@pytest.mark.parametrize("name", ["lm", "induction"])
def test_the_parts_sum_to_the_bundled_decoders_own_logits(name: str) -> None:
    lens = bundled(name)
    assert isinstance(lens, CausalLens)
    ids, _, _ = lens.prompt("def f(x): return x + 1")
    for at in (0, len(ids) // 2, len(ids) - 1):
        logits = _own_logits_causal(lens.net, ids, at)
        for token in (int(logits.argmax()), int(logits.argmin()), 7):
            record = causal_attribution(lens.net, ids, at, token, DESCRIBED)
            _check(record, logits, token)
            N, h = lens.net.config.N, lens.net.config.h
            assert record.heads["decoder_self"].shape == (N, h) and record.mlp.shape == (N,)


def test_the_parts_sum_to_translates_own_logits_through_both_kinds_of_heads() -> None:
    lens = bundled("translate")
    assert isinstance(lens, Seq2SeqLens)
    src, _, _ = lens.source_ids("the cat sat on the mat")
    run = lens.decode("the cat sat on the mat", "greedy")
    index = lens.tokenizer.index
    ids = [lens.tokenizer.bos_id, *(index[t] for t in run.output_tokens[:-1])]
    for at in range(len(ids)):
        logits = _own_logits_seq2seq(lens.net, src, ids, at)
        token = int(logits.argmax())
        record = seq2seq_attribution(lens.net, src, ids, at, token, DESCRIBED)
        _check(record, logits, token)
        assert set(record.heads) == {"decoder_self", "cross"}
        assert np.abs(record.heads["cross"]).sum() > 0


def test_a_decode_runs_step_reads_back_with_its_own_log_probability() -> None:
    """The attribution of a step's chosen token, teacher-forced on the run's prefix for that
    beam, has the log-probability the decode record gave it (the record's is the model's own,
    computed with its key/value cache)."""
    lens = bundled("lm")
    assert isinstance(lens, CausalLens)
    run = lens.decode("The return", "beam", beam_size=3, max_len=6)
    index = lens.tokenizer.index
    for step in (0, 3, len(run.steps) - 1):
        for beam in run.steps[step].beams[:3]:
            keys = run.keys(step, beam.parent) if step else run.keys(step, 0)
            ids = [index[t] for t in keys]
            record = causal_attribution(lens.net, ids, len(ids) - 1, index[beam.token], DESCRIBED)
            assert abs(record.logprob - beam.logprob) <= 1e-4, (step, beam)
            assert abs(record.total - record.logit) <= 1e-4 * max(1.0, abs(record.logit))


@pytest.mark.parametrize("seq2seq", [False, True])
def test_sharp_heads_sum_to_the_logit_too(seq2seq: bool) -> None:
    """Queries times 200: scores past ±40, each head's weight on one key."""
    net = sharpen(tiny_transformer(seed=5), 200.0)
    ids = [1, 4, 5, 6, 7, 8, 4, 5]
    if seq2seq:
        assert isinstance(net, Transformer)
        logits = _own_logits_seq2seq(net, ids, ids[:5], 4)
        record = seq2seq_attribution(net, ids, ids[:5], 4, int(logits.argmax()), DESCRIBED)
    else:
        torch.manual_seed(5)
        lm = sharpen(DecoderOnlyTransformer(net.config).eval(), 200.0)
        assert isinstance(lm, DecoderOnlyTransformer)
        logits = _own_logits_causal(lm, ids, 7)
        record = causal_attribution(lm, ids, 7, int(logits.argmax()), DESCRIBED)
    _check(record, logits, int(logits.argmax()))


def test_a_head_that_writes_nothing_has_no_part(tmp_path: Path) -> None:
    """The hand-built model's heads 0.1 and 1.1 have W^O columns of zero: their parts are 0
    exactly, whatever they attend to."""
    lens = load(str(previous_token_lm(tmp_path / "hand")), device="cpu")
    assert isinstance(lens, CausalLens)
    ids, _, _ = lens.prompt("abcab")
    record = causal_attribution(lens.net, ids, len(ids) - 1, 4, DESCRIBED)
    for layer, head in SILENT:
        assert record.heads["decoder_self"][layer, head] == 0.0
    assert record.heads["decoder_self"][0, 0] != 0.0


def test_parts_that_miss_the_models_own_output_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A norm carried without its β no longer gives the norm's own output: refused, saying
    where, instead of a wrong attribution."""
    net = tiny_transformer(seed=6)
    torch.manual_seed(6)
    lm = DecoderOnlyTransformer(net.config).eval()
    with torch.no_grad():
        for layer in lm.layers:
            layer.sublayer[0].norm.bias.add_(0.5)
    forgetful = stream_module.Stream.layer_norm

    def without_beta(self, gain, bias, eps, out, what):  # type: ignore[no-untyped-def]
        forgetful(self, gain, None, eps, out, what)

    monkeypatch.setattr(stream_module.Stream, "layer_norm", without_beta)
    with pytest.raises(MismatchError, match="layer 0's first Add & Norm"):
        causal_attribution(lm, [1, 4, 5, 6], 3, 5, DESCRIBED)
