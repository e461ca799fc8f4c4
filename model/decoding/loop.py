"""The one step loop greedy, beam search and sampling share when every step is recorded, on
any Stepper.

Every model, ours or Hugging Face's, decodes here: the Decode page, `attnlens decode` and beam
search's task scores. Greedy chooses as `greedy.py` does (`pick` on `choice_scores`), where the
paths that record nothing decode (a trace's output, `attnlens eval`), so all of them see the
same tokens for the same settings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnlens.model.decoding.beam import BeamSearch, best_possible, rank_score
from attnlens.model.decoding.greedy import Greedy, choice_scores
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.decoding.sampling import Sampling
from attnlens.model.decoding.stepper import StepOutput, Stepper
from attnlens.model.decoding.strategy import Proposal, Strategy
from attnlens.model.decoding.vocabulary import Vocabulary as Vocabulary  # the lenses' import
from attnlens.record.decode import BeamStatus, BeamStep, Candidate, Hypothesis, StepRecord

MIN_CANDIDATES = 5  # top candidates recorded per live beam (at least the beam size)


@dataclass(frozen=True)
class Live:
    """A hypothesis still being extended; `beam` is its index in the last step's list."""

    ids: tuple[int, ...]
    score: float  # the sum of the model's own log-probabilities of ids
    ranked: float  # the sum of the processed log-probabilities beam search ranks by
    beam: int
    parent: int  # the row of the step's input it extends


@dataclass(frozen=True)
class Ended:
    """A hypothesis that ended (finished) or was stopped by the maximum length."""

    ids: tuple[int, ...]
    score: float
    rank: float
    finished: bool
    step: int
    beam: int


@dataclass(frozen=True)
class Progress:
    """The search after one step: its record, the live and the finished hypotheses."""

    record: StepRecord
    live: tuple[Live, ...]
    finished: tuple[Ended, ...]
    done: bool  # no live hypothesis can still beat the finished ones


@dataclass(frozen=True)
class Scored:
    """One step's scores, each (B, V): what the strategy chooses from, the processed
    log-probabilities beam search adds up, and the model's own log-probabilities."""

    choose: torch.Tensor
    ranked: torch.Tensor
    own: torch.Tensor

    def shown(self) -> torch.Tensor:
        """The model's own log-probabilities, -inf where bans or processors rule a token out."""
        return self.own.masked_fill(~torch.isfinite(self.ranked), float("-inf"))


def make_strategy(settings: DecodeSettings) -> Strategy:
    """The strategy object of one run (sampling holds the run's seeded generator)."""
    if settings.strategy == "beam":
        return BeamSearch(settings.beam_size)
    if settings.strategy == "sample":
        seed = settings.seed
        assert seed is not None, "resolve() gives every sampling run a seed"
        return Sampling(settings.temperature, settings.top_k, settings.top_p, seed)
    return Greedy()


@torch.inference_mode()  # re-entered on each resume: callers between steps are unaffected
def iter_steps(
    stepper: Stepper[Any],
    settings: DecodeSettings,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    vocab: Vocabulary,
) -> Iterator[Progress]:
    """Decode step by step, yielding after each step; the encoder runs once, in `start`."""
    out = stepper.start(source, prefix, settings.ablate)
    strategy = make_strategy(settings)
    live: tuple[Live, ...] = (Live((), 0.0, 0.0, 0, 0),)
    finished: tuple[Ended, ...] = ()
    for t in range(settings.max_len):
        forced = settings.forced(t)
        scored = _scored(out, live, prefix, vocab, settings.strategy, forced)
        ranks = torch.tensor([h.ranked for h in live], device=out.log_probs.device)  # (B,)
        proposal = strategy.propose(scored.choose, ranks, forced)
        beams, live, ended = _classify(proposal, live, t, settings, vocab, scored)
        finished += ended
        done = _done(live, finished, settings, t)
        record = _record(t, beams, out, scored, vocab, settings.width)
        yield Progress(record, live, finished, done)
        if done or t + 1 == settings.max_len:
            return
        out = _advance(stepper, out, live)


def _scored(
    out: StepOutput[Any],
    live: tuple[Live, ...],
    prefix: Sequence[int],
    vocab: Vocabulary,
    strategy: str,
    forced: int | None,
) -> Scored:
    """Bans and processors on this step's scores: on the log-probabilities for beam search, on
    the raw logits (when the model gives them) for greedy and sampling, as `generate` does. A
    forced step is left as it is, so a forced token keeps its own log-probability."""
    if forced is not None:
        return Scored(out.log_probs, out.log_probs, out.log_probs)
    device = out.log_probs.device
    ids = torch.tensor([[*prefix, *h.ids] for h in live], dtype=torch.long, device=device)
    ranked = vocab.process(ids, out.log_probs)  # (B, V)
    choose = ranked if strategy == "beam" else choice_scores(out, ids, vocab)  # (B, V)
    return Scored(choose, ranked, out.log_probs)


def search(
    stepper: Stepper[Any],
    settings: DecodeSettings,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    vocab: Vocabulary,
) -> tuple[tuple[StepRecord, ...], tuple[Hypothesis, ...]]:
    """Run the whole search: every step's record and the hypotheses, best first."""
    records, last = [], None
    for last in iter_steps(stepper, settings, source, prefix, vocab):
        records.append(last.record)
    assert last is not None, "max_len ≥ 1 gives at least one step"
    return tuple(records), _hypotheses(last, settings, vocab)


def _advance(
    stepper: Stepper[Any], out: StepOutput[Any], live: tuple[Live, ...]
) -> StepOutput[Any]:
    """Follow the surviving hypotheses to their parents' state and feed their new tokens."""
    device = out.log_probs.device
    parents = [h.parent for h in live]
    state = out.state
    if parents != list(range(out.log_probs.size(0))):  # greedy and sampling never reorder
        state = stepper.reorder(state, torch.tensor(parents, device=device))
    tokens = torch.tensor([h.ids[-1] for h in live], device=device)  # (B',)
    return stepper.step(state, tokens)


def _statuses(proposal: Proposal, width: int, ends: frozenset[int]) -> list[BeamStatus]:
    """Alive: the best `width` that do not end. Finished: an end token ranked within `width`
    (HF and fairseq do the same). Pruned: the rest of what was considered."""
    statuses: list[BeamStatus] = []
    alive = 0
    for rank, token in enumerate(proposal.tokens):
        if token in ends:
            statuses.append("finished" if rank < width else "pruned")
        elif alive < width:
            statuses.append("alive")
            alive += 1
        else:
            statuses.append("pruned")
    return statuses


def _classify(
    proposal: Proposal,
    live: tuple[Live, ...],
    t: int,
    settings: DecodeSettings,
    vocab: Vocabulary,
    scored: Scored,
) -> tuple[tuple[BeamStep, ...], tuple[Live, ...], tuple[Ended, ...]]:
    """Number the continuations alive first, then finished, then pruned (each best first)."""
    statuses = _statuses(proposal, settings.width, vocab.ends)
    order = sorted(range(len(statuses)), key=lambda r: STATUS_ORDER[statuses[r]])
    beams: list[BeamStep] = []
    new_live: list[Live] = []
    ended: list[Ended] = []
    for i, r in enumerate(order):
        row, token = proposal.parents[r], proposal.tokens[r]
        parent, logprob = live[row], float(scored.own[row, token])
        ids, score = (*parent.ids, token), parent.score + logprob
        ranked = parent.ranked + float(scored.ranked[row, token])
        beam_of_parent = None if t == 0 else parent.beam
        beams.append(BeamStep(i, beam_of_parent, vocab.names[token], logprob, score, statuses[r]))
        if statuses[r] == "alive":
            new_live.append(Live(ids, score, ranked, i, row))
        elif statuses[r] == "finished":
            rank = rank_score(ranked, len(ids), _alpha(settings), settings.length_norm)
            ended.append(Ended(ids, score, rank, True, t, i))
    return tuple(beams), tuple(new_live), tuple(ended)


STATUS_ORDER: dict[BeamStatus, int] = {"alive": 0, "finished": 1, "pruned": 2}


def _alpha(settings: DecodeSettings) -> float:
    """Only beam search ranks by the length penalty."""
    return settings.length_penalty if settings.strategy == "beam" else 0.0


def _done(
    live: tuple[Live, ...], finished: tuple[Ended, ...], settings: DecodeSettings, t: int
) -> bool:
    """Stop when nothing is alive, or when `width` hypotheses have finished and no live one
    can still rank above the worst of them (as the model's own beam search judges it)."""
    if not live:
        return True
    if len(finished) < settings.width:
        return False
    if settings.early_stopping is True:
        return True
    kth = sorted((h.rank for h in finished), reverse=True)[settings.width - 1]
    bound = max(
        best_possible(h.ranked, t + 1, settings.max_len, _alpha(settings), settings.length_norm,
                      settings.early_stopping)
        for h in live
    )  # fmt: skip
    return bound <= kth


def _record(
    t: int,
    beams: tuple[BeamStep, ...],
    out: StepOutput[Any],
    scored: Scored,
    vocab: Vocabulary,
    width: int,
) -> StepRecord:
    """The step's beams, each live row's top candidates and attention, as numpy."""
    shown = scored.shown()  # (B, V)
    n = min(max(MIN_CANDIDATES, width), shown.size(-1))
    top = shown.topk(n, dim=-1)  # (B, n) ×2
    probs, ids = top.values.exp().tolist(), top.indices.tolist()
    candidates = tuple(
        tuple(Candidate(vocab.names[i], p) for i, p in zip(row_ids, row_p, strict=True))
        for row_ids, row_p in zip(ids, probs, strict=True)
    )
    cross = None if out.cross_attention is None else _numpy(out.cross_attention)
    return StepRecord(t, beams, candidates, cross, _numpy(out.self_attention))


def _numpy(attention: torch.Tensor) -> np.ndarray:
    """(L, B, H, K) on any device to (L, H, B, K) float32 on the CPU."""
    return attention.permute(0, 2, 1, 3).float().cpu().numpy().copy()


def _hypotheses(
    last: Progress, settings: DecodeSettings, vocab: Vocabulary
) -> tuple[Hypothesis, ...]:
    """The `width` best by rank; if the maximum length stopped the search, live ones count."""
    ended = list(last.finished)
    if not last.done:
        alpha, t = _alpha(settings), last.record.step
        ended += [
            Ended(h.ids, h.score, rank_score(h.ranked, len(h.ids), alpha, settings.length_norm),
                  False, t, h.beam)
            for h in last.live
        ]  # fmt: skip
    best = sorted(ended, key=lambda h: h.rank, reverse=True)[: settings.width]
    return tuple(
        Hypothesis(
            tokens=tuple(vocab.names[i] for i in h.ids),
            text=vocab.detokenize(h.ids),
            score=h.score,
            finished=h.finished,
            rank_score=h.rank,
            step=h.step,
            beam=h.beam,
        )
        for h in best
    )
