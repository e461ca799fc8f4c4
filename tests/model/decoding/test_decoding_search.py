"""Greedy, beam search and sampling on one loop: beam 1 is greedy, the beams form a tree."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from attnlens import load
from attnlens.model.decoding.beam import length_penalty
from attnlens.model.decoding.loop import greedy_output, search
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.request import DecodeRequest, resolve
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from helpers.parts import samples

TEXTS = ("abc", "hgfedcba", "a b c", "ddd")


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> Seq2SeqLens:
    loaded = load(str(tiny_model_dir), device="cpu")
    assert isinstance(loaded, Seq2SeqLens)
    return loaded


def check_tree(run: DecodeRun) -> None:
    """Parent pointers form a tree over alive beams; every finished leaf spells its path."""
    for t, step in enumerate(run.steps):
        alive_before = 1 if t == 0 else sum(b.status == "alive" for b in run.steps[t - 1].beams)
        assert step.decoder_self_attention.shape[2] == alive_before == len(step.candidates)
        assert step.decoder_self_attention.shape[3] == t + 1
        assert [b.beam for b in step.beams] == list(range(len(step.beams)))
        order = {"alive": 0, "finished": 1, "pruned": 2}
        assert [order[b.status] for b in step.beams] == sorted(order[b.status] for b in step.beams)
        for b in step.beams:
            if t == 0:
                assert b.parent is None
                assert math.isclose(b.score, b.logprob)
            else:
                assert b.parent is not None
                parent = run.steps[t - 1].beams[b.parent]
                assert parent.status == "alive"
                assert math.isclose(b.score, parent.score + b.logprob, abs_tol=1e-9)
            if b.status == "finished":
                path = run.path(t, b.beam)
                assert path[-1].token == "</s>" and all(p.token != "</s>" for p in path[:-1])
    for h in run.hypotheses:
        path = run.path(h.step, h.beam)
        assert tuple(p.token for p in path) == h.tokens
        assert path[-1].status == ("finished" if h.finished else "alive")
        assert math.isclose(h.score, sum(p.logprob for p in path), abs_tol=1e-6)


@pytest.mark.parametrize("text", TEXTS)
def test_beam_of_one_is_greedy(lens: Seq2SeqLens, text: str) -> None:
    greedy = lens.decode(text)
    beam = lens.decode(text, strategy="beam", beam_size=1)
    assert beam.output_tokens == greedy.output_tokens
    assert beam.score == greedy.score
    assert len(beam.steps) == len(greedy.steps)


@pytest.mark.parametrize("text", TEXTS)
def test_greedy_takes_the_top_candidate_every_step(lens: Seq2SeqLens, text: str) -> None:
    run = lens.decode(text)
    for step in run.steps:
        (beam,) = step.beams
        assert beam.token == step.candidates[0][0].token
        assert math.isclose(math.exp(beam.logprob), step.candidates[0][0].prob, rel_tol=1e-5)
    check_tree(run)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
@pytest.mark.parametrize("text", TEXTS)
def test_beam_hypotheses_are_sorted_and_spell_their_tree(
    lens: Seq2SeqLens, text: str, alpha: float
) -> None:
    run = lens.decode(text, strategy="beam", beam_size=4, length_penalty=alpha)
    ranks = [h.rank_score for h in run.hypotheses]
    assert ranks == sorted(ranks, reverse=True)
    for h in run.hypotheses:
        assert math.isclose(h.rank_score, h.score / length_penalty(len(h.tokens), alpha))
    assert 1 <= len(run.hypotheses) <= 4
    assert run.output_tokens == run.hypotheses[0].tokens and run.score == run.hypotheses[0].score
    check_tree(run)


@pytest.mark.parametrize("text", TEXTS)
def test_beam_stops_only_when_no_live_beam_can_beat_the_finished(
    lens: Seq2SeqLens, text: str
) -> None:
    run = lens.decode(text, strategy="beam", beam_size=3, max_len=23)
    finished = [(t, b) for t, s in enumerate(run.steps) for b in s.beams if b.status == "finished"]

    def kth_best(upto: int) -> float:
        scores = sorted((b.score for t, b in finished if t <= upto), reverse=True)
        return scores[2] if len(scores) >= 3 else -math.inf

    def best_alive(t: int) -> float:
        return max((b.score for b in run.steps[t].beams if b.status == "alive"), default=-math.inf)

    last = len(run.steps) - 1
    if last < 22:  # stopped before the maximum length: nothing alive could still win
        assert best_alive(last) <= kth_best(last)
        assert all(h.finished for h in run.hypotheses) and len(run.hypotheses) == 3
    for t in range(last):  # and it did not stop while something alive could
        assert best_alive(t) > kth_best(t)
    best = max(b.score for _, b in finished) if finished else -math.inf
    assert run.score >= best - 1e-9 or not run.hypotheses[0].finished


def test_forcing_a_token_decodes_on_from_it(lens: Seq2SeqLens) -> None:
    plain = lens.decode("abcd")
    forced = lens.decode("abcd", force={1: "h"})
    assert forced.output_tokens[0] == plain.output_tokens[0]
    assert forced.output_tokens[1] == "h"
    assert forced.steps[1].beams[0].token == "h"
    for step in forced.steps[2:]:  # greedy again after the forced step
        assert step.beams[0].token == step.candidates[0][0].token
    p_h = {c.token: c.prob for c in forced.steps[1].candidates[0]}.get("h")
    assert p_h is None or math.isclose(
        math.exp(forced.steps[1].beams[0].logprob), p_h, rel_tol=1e-5
    )
    check_tree(forced)


def test_forcing_the_end_token_ends_every_beam(lens: Seq2SeqLens) -> None:
    run = lens.decode("abcd", strategy="beam", beam_size=3, force={2: "</s>"})
    assert len(run.steps) == 3
    assert all(b.status == "finished" for b in run.steps[2].beams)
    assert len(run.steps[2].beams) == 3  # each of the three live beams took the end token
    assert all(h.finished and len(h.tokens) <= 3 for h in run.hypotheses)
    check_tree(run)


def test_sampling_runs_form_a_single_path(lens: Seq2SeqLens) -> None:
    run = lens.decode("hgfe", strategy="sample", seed=5, temperature=1.3, top_p=0.95)
    assert [len(s.beams) for s in run.steps] == [1] * len(run.steps)
    check_tree(run)


def test_ablation_changes_the_decoding_and_is_recorded(lens: Seq2SeqLens) -> None:
    plain = lens.decode("abcabc", strategy="beam", beam_size=2)
    ablated = lens.decode(
        "abcabc", strategy="beam", beam_size=2, ablate=["1.0", "decoder_self:0.1"]
    )
    assert ablated.params["ablate"] == ["cross:1.0", "decoder_self:0.1"]
    assert ablated.steps[0].beams[0].logprob != plain.steps[0].beams[0].logprob
    replay = lens.decode("abcabc", strategy="beam", **ablated.params)
    assert replay.equals(ablated)


def test_the_run_does_not_change_torch_global_random_state(lens: Seq2SeqLens) -> None:
    before = torch.get_rng_state()
    lens.decode("abc", strategy="sample", seed=1)
    assert torch.equal(before, torch.get_rng_state())


SPECIALS_NEVER_TARGETS = {"<pad>", "<s>", "<unk>"}


@pytest.mark.parametrize("strategy", ["greedy", "beam", "sample"])
def test_tokens_never_trained_as_targets_are_never_chosen(lens: Seq2SeqLens, strategy: str) -> None:
    """A random model gives <pad>, <s> and <unk> real probability; none is ever picked or
    offered, so output_text always spells output_tokens."""
    for text in TEXTS:
        run = lens.decode(text, strategy=strategy, beam_size=6, max_len=12, seed=1)
        for step in run.steps:
            assert not SPECIALS_NEVER_TARGETS & {b.token for b in step.beams}
            assert not SPECIALS_NEVER_TARGETS & {c.token for row in step.candidates for c in row}
        for h in run.hypotheses:
            assert h.text == "".join(t for t in h.tokens if t != "</s>")


def test_a_forced_special_token_keeps_its_own_log_probability(lens: Seq2SeqLens) -> None:
    run = lens.decode("abc", max_len=4, force={1: "<s>"})
    assert run.output_tokens[1] == "<s>"
    forced = run.steps[1].beams[0]
    assert forced.token == "<s>" and math.isfinite(forced.logprob)
    tr = lens.trace("abc", target=run.output_text)  # the text drops <s>: another sequence
    assert tr.tgt_tokens[1:] != run.output_tokens[: len(tr.tgt_tokens) - 1]


@pytest.mark.parametrize("name", ["reverse", "sort", "translate", "dates"])
def test_a_trace_is_teacher_forced_on_the_output_decode_gives(name: str) -> None:
    """The trace finds its greedy output without recording steps (greedy_output); it must be
    the trace teacher-forced on the output of `decode`, on the bundled models' own kind of input
    and on input they were never trained for (where near-ties between tokens are likelier)."""
    loaded = load(name, device="cpu")
    assert isinstance(loaded, Seq2SeqLens)
    texts = [*samples(loaded).sample_texts(40, seed=7), "a", "zzzz zzzz", "12 3 45", "the the the"]
    for text in texts:
        try:
            run = loaded.decode(text)
        except InputError:
            continue
        teacher_forced = loaded.trace(text, run.output_text)
        assert loaded.trace(text).tgt_tokens == teacher_forced.tgt_tokens, text


def test_greedy_output_stops_where_search_stops(lens: Seq2SeqLens) -> None:
    """At the maximum length (no end token) and at the end token, the same ids as search's
    best hypothesis; anything but plain greedy is refused."""
    stepper, start = TransformerStepper(lens.net), [lens.tokenizer.bos_id]
    vocab = lens.vocabulary()
    for text in TEXTS:
        src, _, _ = lens.source_ids(text)
        for max_len in (1, 2, 3, lens.limits.max_len):
            settings = resolve(DecodeRequest.from_kwargs(max_len=max_len), lens.limits)
            _, best = search(stepper, settings, src, start, vocab)
            ids = greedy_output(stepper, settings, src, start, vocab)
            assert tuple(vocab.names[i] for i in ids) == best[0].tokens
    beam = resolve(DecodeRequest.from_kwargs(strategy="beam"), lens.limits)
    with pytest.raises(ValueError, match="plain greedy"):
        greedy_output(stepper, beam, src, start, vocab)
