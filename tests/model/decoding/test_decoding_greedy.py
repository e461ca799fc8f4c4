"""Greedy decoding written once: the batched loop (`attnlens eval`, task scores) chooses what the
recorded search chooses for each source alone, heads ablated and tokens banned included."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from attnlens import load
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.loop import Vocabulary, greedy_ids, search
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.request import DecodeRequest, resolve
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.model.training.batch import source_ids
from attnlens.model.training.evaluate import greedy_batch
from helpers.parts import samples

ODD = ("a", "zzzz zzzz", "12 3 45", "the the the")  # inputs the models were never trained on
ABLATE = (HeadRef("cross", 1, 1), HeadRef("cross", 1, 2))  # heads whose loss changes outputs


def bundled(name: str) -> Seq2SeqLens:
    loaded = load(name, device="cpu")
    assert isinstance(loaded, Seq2SeqLens)
    return loaded


def alone(lens: Seq2SeqLens, src: list[int], vocab: Vocabulary, max_len: int) -> tuple[str, ...]:
    """The tokens `search` (greedy, every step recorded) gives for one source."""
    ablate = [str(r) for r in ABLATE]
    request = DecodeRequest.from_kwargs(strategy="greedy", ablate=ablate, max_len=max_len)
    settings = resolve(request, lens.limits)
    _, best = search(TransformerStepper(lens.net), settings, src, [lens.tokenizer.bos_id], vocab)
    return best[0].tokens


@pytest.mark.parametrize("name", ["reverse", "translate"])
def test_a_batch_decodes_each_source_as_search_does_alone(name: str) -> None:
    """Sources of many lengths side by side (so padded), two heads ablated and one more token
    banned than the lens bans (the one search picks first for the first source): the ids and
    the texts equal search's for each source decoded by itself, at the full and a short length."""
    lens = bundled(name)
    tok = lens.tokenizer
    texts = [*samples(lens).sample_texts(24, seed=7), *ODD]
    sources = [source_ids(tok, t) for t in texts]
    plain = lens.vocabulary()
    vocab = replace(plain, banned=(*plain.banned, tok.index[alone(lens, sources[0], plain, 1)[0]]))
    stepper, prefix = TransformerStepper(lens.net), [tok.bos_id]
    for max_len in (3, lens.limits.max_len):
        first = stepper.start_batch(sources, prefix, ABLATE)
        batched = greedy_ids(stepper, first, prefix, vocab, max_len)
        expected = [alone(lens, src, vocab, max_len) for src in sources]
        assert [tuple(vocab.names[i] for i in ids) for ids in batched] == expected
        outputs = greedy_batch(lens.net, tok, texts, max_len, ABLATE, vocab.banned)
        assert outputs == [tok.decode([tok.index[t] for t in e]) for e in expected]
    unbanned = greedy_batch(lens.net, tok, texts, lens.limits.max_len, (), plain.banned)
    assert sum(a != b for a, b in zip(outputs, unbanned, strict=True)) >= 2  # both took effect


def test_a_batch_row_follows_its_source_through_reorder() -> None:
    """start_batch's rows hold their own memory: reordering them moves it with them, so each
    row's next step is still its own source's."""
    lens = bundled("reverse")
    tok, stepper = lens.tokenizer, TransformerStepper(lens.net)
    sources = [source_ids(tok, "abc"), source_ids(tok, "hello there")]
    out = stepper.start_batch(sources, [tok.bos_id])
    tokens = out.log_probs.argmax(-1)  # (2,)
    ahead = stepper.step(out.state, tokens)
    swapped = stepper.step(stepper.reorder(out.state, torch.tensor([1, 0])), tokens.flip(0))
    assert torch.allclose(swapped.log_probs, ahead.log_probs.flip(0), atol=1e-5)
    for row, src in enumerate(sources):
        single = stepper.start(src, [tok.bos_id])
        assert torch.allclose(single.log_probs[0], out.log_probs[row], atol=1e-5)
