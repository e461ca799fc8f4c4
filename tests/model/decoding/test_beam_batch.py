"""Beam search over many sources side by side (`beam_texts`) finds, for each source, the best
hypothesis the step loop finds for that source alone: same proposals, ranking and stopping,
each source with its own maximum length, heads ablated or not."""

from __future__ import annotations

from dataclasses import replace

import pytest

from attnlens import load
from attnlens.model.decoding.loop import beam_texts, search
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.request import DecodeRequest, resolve
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from helpers.apptest import require_bundled

TEXTS = ("abc", "hgfedcba", "qwertyuiop", "ddd", "zyx", "q", "mnbvcxzlkj")
MAX_LENS = (3, 9, 11, 12, 1, 7, 6)  # some stop the search before the end token


@pytest.fixture(scope="module")
def lens() -> Seq2SeqLens:
    require_bundled("reverse")
    loaded = load("reverse", device="cpu")
    assert isinstance(loaded, Seq2SeqLens)
    return loaded


@pytest.mark.parametrize(
    ("ablate", "penalty", "beams"),
    [((), 0.0, 4), (("cross:0.1", "encoder_self:1.0"), 0.0, 3), ((), 1.0, 5)],
)
def test_each_source_gets_the_best_hypothesis_of_its_own_search(
    lens: Seq2SeqLens, ablate: tuple[str, ...], penalty: float, beams: int
) -> None:
    request = DecodeRequest.from_kwargs(
        strategy="beam", beam_size=beams, ablate=list(ablate), length_penalty=penalty,
        max_len=max(MAX_LENS),
    )  # fmt: skip
    settings = resolve(request, lens.limits)
    sources = [lens.source_ids(t)[0] for t in TEXTS]
    stepper, prefix, vocab = (
        TransformerStepper(lens.net),
        [lens.tokenizer.bos_id],
        lens.vocabulary(),
    )
    first = stepper.start_batch(sources, prefix, settings.ablate)
    texts = beam_texts(stepper, first, prefix, vocab, settings, MAX_LENS)
    alone = []
    for source, max_len in zip(sources, MAX_LENS, strict=True):
        _, hypotheses = search(stepper, replace(settings, max_len=max_len), source, prefix, vocab)
        alone.append(hypotheses[0].text)
    assert texts == alone
    assert len(set(texts)) > 1  # the sources differ in what they find: a real comparison


def test_settings_other_than_plain_beam_search_are_refused(lens: Seq2SeqLens) -> None:
    settings = resolve(DecodeRequest.from_kwargs(strategy="greedy", max_len=3), lens.limits)
    stepper, prefix = TransformerStepper(lens.net), [lens.tokenizer.bos_id]
    first = stepper.start_batch([lens.source_ids("ab")[0]], prefix)
    with pytest.raises(ValueError, match="beam-search settings"):
        beam_texts(stepper, first, prefix, lens.vocabulary(), settings, [3])
    beam = replace(settings, strategy="beam")
    with pytest.raises(ValueError, match="1 rows"):
        beam_texts(stepper, first, prefix, lens.vocabulary(), beam, [3, 4])
