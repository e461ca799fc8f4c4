"""Our Transformer's Stepper: the cached path gives exactly what re-running the prefix gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.loop import Vocabulary, search
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.record.decode import StepRecord
from helpers.tiny import TINY_CHARS, tiny_transformer

TOK = CharTokenizer(TINY_CHARS)
VOCAB = Vocabulary(TOK.vocab, TOK.eos_id, lambda ids: TOK.decode(list(ids)))
SOURCE = [*TOK.encode("abcdh ga").ids, TOK.eos_id]


def run(
    settings: DecodeSettings, cached: bool, seed: int = 0
) -> tuple[tuple[StepRecord, ...], tuple]:  # type: ignore[type-arg]
    net = tiny_transformer(seed)
    return search(TransformerStepper(net, cached=cached), settings, SOURCE, [TOK.bos_id], VOCAB)


SETTINGS = [
    DecodeSettings("greedy", max_len=12),
    DecodeSettings("beam", max_len=12, beam_size=4),
    DecodeSettings("beam", max_len=12, beam_size=3, length_penalty=1.0),
    DecodeSettings("sample", max_len=12, temperature=1.5, top_p=0.9, seed=3),
    DecodeSettings(
        "beam", max_len=12, beam_size=2, force=((2, 5),), ablate=(HeadRef("decoder_self", 1, 0),)
    ),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.strategy)
def test_cached_and_uncached_decoding_agree(settings: DecodeSettings) -> None:
    cached_steps, cached_hyps = run(settings, cached=True)
    full_steps, full_hyps = run(settings, cached=False)
    assert [h.tokens for h in cached_hyps] == [h.tokens for h in full_hyps]
    assert len(cached_steps) == len(full_steps) > 2
    for a, b in zip(cached_steps, full_steps, strict=True):
        exact = [(x.beam, x.parent, x.token, x.status) for x in a.beams]
        assert exact == [(x.beam, x.parent, x.token, x.status) for x in b.beams]
        np.testing.assert_allclose(
            [x.score for x in a.beams], [x.score for x in b.beams], atol=1e-5
        )
        np.testing.assert_allclose(a.decoder_self_attention, b.decoder_self_attention, atol=1e-5)
        assert a.cross_attention is not None and b.cross_attention is not None
        np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=1e-5)
    for a, b in zip(cached_hyps, full_hyps, strict=True):
        assert abs(a.score - b.score) < 1e-5


def test_each_step_feeds_one_position_and_returns_that_row() -> None:
    net = tiny_transformer(1)
    stepper = TransformerStepper(net)
    out = stepper.start(SOURCE, [TOK.bos_id])
    L, h, S = net.config.N, net.config.h, len(SOURCE)
    assert out.log_probs.shape == (1, len(TOK))
    assert out.self_attention.shape == (L, 1, h, 1)
    assert out.cross_attention is not None and out.cross_attention.shape == (L, 1, h, S)
    state = stepper.reorder(out.state, torch.tensor([0, 0, 0]))  # widen to three beams
    out = stepper.step(state, torch.tensor([4, 5, 6]))
    assert out.self_attention.shape == (L, 3, h, 2)
    assert out.state.cache is not None and out.state.cache[0][0].shape[:3] == (3, h, 2)
    assert torch.allclose(out.self_attention.sum(-1), torch.ones(L, 3, h))
    assert out.log_probs.exp().sum(-1).allclose(torch.ones(3))


def test_reorder_follows_parents_and_leaves_the_given_state_alone() -> None:
    stepper = TransformerStepper(tiny_transformer(2))
    out = stepper.step(
        stepper.reorder(stepper.start(SOURCE, [TOK.bos_id]).state, torch.tensor([0, 0])),
        torch.tensor([4, 7]),
    )
    before = out.state.tokens.clone()
    picked = stepper.reorder(out.state, torch.tensor([1, 1, 0]))
    assert torch.equal(out.state.tokens, before)
    assert picked.tokens[:, -1].tolist() == [7, 7, 4]
    assert picked.cache is not None and out.state.cache is not None
    assert torch.equal(picked.cache[1][0][2], out.state.cache[1][0][0])
    nxt = stepper.step(picked, torch.tensor([4, 5, 6]))
    alone = stepper.step(stepper.reorder(out.state, torch.tensor([0])), torch.tensor([6]))
    assert torch.allclose(nxt.log_probs[2], alone.log_probs[0], atol=1e-6)


def test_ablating_every_cross_head_cuts_the_output_off_from_the_source() -> None:
    net = tiny_transformer(3)
    every = tuple(HeadRef("cross", layer, head) for layer in range(2) for head in range(2))
    settings = DecodeSettings("beam", max_len=8, beam_size=2, ablate=every)
    stepper = TransformerStepper(net)
    other = [*TOK.encode("hh").ids, TOK.eos_id]
    a = search(stepper, settings, SOURCE, [TOK.bos_id], VOCAB)[1]
    b = search(stepper, settings, other, [TOK.bos_id], VOCAB)[1]
    assert [(h.tokens, round(h.score, 5)) for h in a] == [(h.tokens, round(h.score, 5)) for h in b]
    plain = search(
        stepper, DecodeSettings("beam", max_len=8, beam_size=2), SOURCE, [TOK.bos_id], VOCAB
    )[1]
    plain_other = search(
        stepper, DecodeSettings("beam", max_len=8, beam_size=2), other, [TOK.bos_id], VOCAB
    )[1]
    assert plain[0].score != plain_other[0].score
