"""The one decoding loop (`run`): greedy, beam search and sampling, one source or many side by
side, every step recorded or nothing, on any Stepper.

Every model decodes here: the Decode page and `attnlens decode` (`search`: one source, every step
recorded), a trace's own output (`greedy_output`), `attnlens eval` and the experiments' task
scores (`best_outputs`: many sources, one forward pass per step over every live hypothesis of
every source still searching). Each source is searched by the same decisions (`Search.decide`),
so it gives the same tokens alone and beside others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnlens.model.decoding.beam import BeamSearch, best_possible, rank_score
from attnlens.model.decoding.greedy import Greedy, choice_scores
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.decoding.sampling import Sampling
from attnlens.model.decoding.step_record import step_record
from attnlens.model.decoding.stepper import StepOutput, Stepper
from attnlens.model.decoding.strategy import Proposal, Strategy
from attnlens.model.decoding.vocabulary import Vocabulary as Vocabulary  # the lenses' import
from attnlens.record.decode import BeamStatus, BeamStep, Hypothesis, StepRecord

STATUS_ORDER: dict[BeamStatus, int] = {"alive": 0, "finished": 1, "pruned": 2}
FEW = 4  # continuations whose scores are read one by one; more are gathered at once


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
    """The search after one step: its record, the live and the finished hypotheses, and
    whether no live one can still beat the finished ones."""

    record: StepRecord
    live: tuple[Live, ...]
    finished: tuple[Ended, ...]
    done: bool


@dataclass(frozen=True)
class Scored:
    """One step's scores, each (R, V): what the strategy chooses from, the processed
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


@dataclasses.dataclass
class Search:
    """One source's search so far (mutable: it lives for one run of the loop)."""

    settings: DecodeSettings  # the run's settings, with this source's max_len
    live: tuple[Live, ...] = (Live((), 0.0, 0.0, 0, 0),)
    finished: tuple[Ended, ...] = ()
    step: int = 0
    done: bool = False

    @property
    def over(self) -> bool:
        """Whether it searches no further: nothing can beat what finished, or its last step."""
        return self.done or self.step + 1 == self.settings.max_len

    def decide(
        self,
        t: int,
        proposal: Proposal,
        values: tuple[list[float], list[float]],
        vocab: Vocabulary,
        ends: frozenset[int],
    ) -> tuple[BeamStep, ...]:
        """Step t's continuations numbered alive first, then finished, then pruned (each best
        first); values: each continuation's own and processed log-probability."""
        settings, live = self.settings, self.live
        statuses = _statuses(proposal, settings.width, ends)
        order = sorted(range(len(statuses)), key=lambda r: STATUS_ORDER[statuses[r]])
        beams, new_live, ended = [], [], []
        own, ranked_of = values
        for i, r in enumerate(order):
            row, token, logprob = proposal.parents[r], proposal.tokens[r], own[r]
            parent = live[row]
            ids, score = (*parent.ids, token), parent.score + logprob
            ranked = parent.ranked + ranked_of[r]
            beam_of_parent = None if t == 0 else parent.beam
            beams.append(
                BeamStep(i, beam_of_parent, vocab.names[token], logprob, score, statuses[r])
            )
            if statuses[r] == "alive":
                new_live.append(Live(ids, score, ranked, i, row))
            elif statuses[r] == "finished":
                rank = rank_score(ranked, len(ids), _alpha(settings), settings.length_norm)
                ended.append(Ended(ids, score, rank, True, t, i))
        self.live, self.finished, self.step = tuple(new_live), self.finished + tuple(ended), t
        self.done = _done(self.live, self.finished, settings, t)
        return tuple(beams)

    def best(self) -> list[Ended]:
        """The `width` best by rank; if the maximum length stopped the search, live ones count."""
        s, ended = self.settings, list(self.finished)
        if not self.done:
            ended += [
                Ended(h.ids, h.score, rank_score(h.ranked, len(h.ids), _alpha(s), s.length_norm),
                      False, self.step, h.beam)
                for h in self.live
            ]  # fmt: skip
        return sorted(ended, key=lambda h: h.rank, reverse=True)[: s.width]


@torch.inference_mode()  # re-entered on each resume: callers between steps are unaffected
def run(
    stepper: Stepper[Any],
    first: StepOutput[Any],
    prefix: Sequence[int],
    vocab: Vocabulary,
    searches: Sequence[Search],
    record: bool = False,
) -> Iterator[StepRecord | None]:
    """One step of every search still going per forward pass, from `first` (a row per search),
    yielding after each its record (`record`: one search only) or None. The searches share
    every setting but max_len."""
    if record and len(searches) != 1:
        raise ValueError(f"one search can be recorded, not {len(searches)}")
    settings, strategy = searches[0].settings, make_strategy(searches[0].settings)
    out, active, ends, device = first, list(searches), vocab.ends, first.log_probs.device
    seqs = torch.tensor([list(prefix)] * len(searches), dtype=torch.long, device=device)
    kept = bool(vocab.processors)  # the sequences so far, kept where a processor reads them
    for t in range(max(s.settings.max_len for s in searches)):
        forced = settings.forced(t)
        scored = _scored(out, seqs, vocab, settings.strategy, forced)
        sizes = [len(s.live) for s in active]
        ranks = torch.tensor([h.ranked for s in active for h in s.live], device=device)  # (R,)
        proposals = strategy.propose(scored.choose, ranks, sizes, forced)
        values = _values(scored, proposals, sizes)
        rows: list[int] = []
        beams: tuple[BeamStep, ...] = ()
        still, offset = [], 0
        for search, proposal, value, n in zip(active, proposals, values, sizes, strict=True):
            beams = search.decide(t, proposal, value, vocab, ends)
            if not search.over:
                still.append(search)
                rows += [offset + h.parent for h in search.live]
            offset += n
        yield step_record(t, beams, out, scored.shown(), vocab, settings.width) if record else None
        if not still:
            return
        tokens = torch.tensor([h.ids[-1] for s in still for h in s.live], device=device)  # (R',)
        state = out.state
        if rows != list(range(out.log_probs.size(0))):  # greedy and sampling alone never reorder
            index = torch.tensor(rows, device=device)  # (R',)
            state = stepper.reorder(state, index)
            seqs = seqs.index_select(0, index) if kept else seqs
        if kept:  # else the prefix alone stands for them: bans read no sequence
            seqs = torch.cat([seqs, tokens.unsqueeze(1)], dim=1)  # (R', P + t + 1)
        out, active = stepper.step(state, tokens), still


def _scored(
    out: StepOutput[Any], ids: torch.Tensor, vocab: Vocabulary, strategy: str, forced: int | None
) -> Scored:
    """Bans and processors on this step's scores of the sequences ids (R, P + t): on the
    log-probabilities for beam search, on the raw logits (when the model gives them) for greedy
    and sampling, as `generate` does. A forced step is left as it is, so a forced token keeps
    its own log-probability."""
    if forced is not None:
        return Scored(out.log_probs, out.log_probs, out.log_probs)
    ranked = vocab.process(ids, out.log_probs)  # (R, V)
    choose = ranked if strategy == "beam" else choice_scores(out, ids, vocab)  # (R, V)
    return Scored(choose, ranked, out.log_probs)


def _values(
    scored: Scored, proposals: Sequence[Proposal], sizes: Sequence[int]
) -> list[tuple[list[float], list[float]]]:
    """Each proposed continuation's own and processed log-probability, per source: a few read
    one by one, more in one gather each (`take` on the flat (R·V) scores)."""
    cells, offset = [], 0
    for proposal, n in zip(proposals, sizes, strict=True):
        cells += [(offset + p, t) for p, t in zip(proposal.parents, proposal.tokens, strict=True)]
        offset += n
    if len(cells) <= FEW:
        own = [float(scored.own[r, t]) for r, t in cells]
        ranked = [float(scored.ranked[r, t]) for r, t in cells]
    else:
        V = scored.own.size(-1)
        index = torch.tensor([r * V + t for r, t in cells], device=scored.own.device)  # (C,)
        own, ranked = scored.own.take(index).tolist(), scored.ranked.take(index).tolist()
    out, start = [], 0
    for proposal in proposals:
        end = start + len(proposal.tokens)
        out.append((own[start:end], ranked[start:end]))
        start = end
    return out


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


# The loop's three uses: one source recorded, one source's output, many sources' outputs.


@torch.inference_mode()  # re-entered on each resume, as `run`
def iter_steps(
    stepper: Stepper[Any],
    settings: DecodeSettings,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    vocab: Vocabulary,
) -> Iterator[Progress]:
    """Decode one source step by step, yielding after each step (the encoder runs once)."""
    one = Search(settings)
    first = stepper.start(source, prefix, settings.ablate)
    for record in run(stepper, first, prefix, vocab, [one], record=True):
        assert record is not None
        yield Progress(record, one.live, one.finished, one.done)


def search(
    stepper: Stepper[Any],
    settings: DecodeSettings,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    vocab: Vocabulary,
) -> tuple[tuple[StepRecord, ...], tuple[Hypothesis, ...]]:
    """Run the whole search of one source: every step's record and the hypotheses, best
    first."""
    one = Search(settings)
    first = stepper.start(source, prefix, settings.ablate)
    records = tuple(r for r in run(stepper, first, prefix, vocab, [one], record=True) if r)
    return records, tuple(
        Hypothesis(
            tokens=tuple(vocab.names[i] for i in h.ids), text=vocab.detokenize(h.ids),
            score=h.score, finished=h.finished, rank_score=h.rank, step=h.step, beam=h.beam,
        )
        for h in one.best()
    )  # fmt: skip


def best_outputs(
    stepper: Stepper[Any],
    first: StepOutput[Any],
    prefix: Sequence[int],
    vocab: Vocabulary,
    settings: DecodeSettings,
    max_lens: Sequence[int],
) -> list[tuple[int, ...]]:
    """The ids of the best hypothesis of each row of `first` (one row per source, as a
    batched start gives them), each searched with settings (nothing forced) and its own
    maximum length, as `search` would find it for that source alone; nothing recorded."""
    if settings.force:
        raise ValueError("best_outputs takes settings with no forced tokens")
    if len(max_lens) != first.log_probs.size(0):
        raise ValueError(f"{len(max_lens)} maximum lengths for {first.log_probs.size(0)} rows")
    searches = [Search(dataclasses.replace(settings, max_len=m)) for m in max_lens]
    for _ in run(stepper, first, prefix, vocab, searches):
        pass
    return [s.best()[0].ids for s in searches]


def greedy_ids(
    stepper: Stepper[Any],
    first: StepOutput[Any],
    prefix: Sequence[int],
    vocab: Vocabulary,
    max_len: int,
) -> list[tuple[int, ...]]:
    """Greedy decoding of every row of `first` side by side: each row's ids up to its first end
    token, included, or max_len of them."""
    rows = [max_len] * first.log_probs.size(0)
    return best_outputs(stepper, first, prefix, vocab, DecodeSettings("greedy", max_len), rows)


def greedy_output(
    stepper: Stepper[Any],
    settings: DecodeSettings,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    vocab: Vocabulary,
) -> tuple[int, ...]:
    """The ids greedy decoding gives, the end token included when one was chosen: what
    `search` finds as its best hypothesis for these settings, with nothing recorded (for a
    caller that needs the output alone, as a trace teacher-forced on it does)."""
    if settings.strategy != "greedy" or settings.force:
        raise ValueError("greedy_output takes plain greedy settings (no forced tokens)")
    first = stepper.start(source, prefix, settings.ablate)
    return best_outputs(stepper, first, prefix, vocab, settings, [settings.max_len])[0]


def beam_texts(
    stepper: Stepper[Any],
    first: StepOutput[Any],
    prefix: Sequence[int],
    vocab: Vocabulary,
    settings: DecodeSettings,
    max_lens: Sequence[int],
) -> list[str]:
    """The best hypothesis' text of each row of `first` (one row per source, as `start_batch`
    gives them), each searched with beam-search settings and its own maximum length."""
    if settings.strategy != "beam" or settings.force:
        raise ValueError("beam_texts takes beam-search settings with no forced tokens")
    ids = best_outputs(stepper, first, prefix, vocab, settings, max_lens)
    return [vocab.detokenize(i) for i in ids]
