"""Beam search over many sources side by side, for the experiments' beam-search task scores.

Each source is searched by the step loop's own decisions (`loop.py`: the same proposal,
statuses, ranking and stopping, each with that source's maximum length); only the forward pass
is shared: one per step over every live hypothesis of every source still searching, on a
stepper started with `start_batch`. Nothing is recorded; each source gets the text of its best
hypothesis, as `search` ranks them. On `translate`, 100 examples side by side take about a
twentieth of the CPU of 100 searches one at a time (bench/experiments_speed.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch

from attnlens.model.decoding.beam import BeamSearch, rank_score
from attnlens.model.decoding.loop import Ended, Live, Scored, _alpha, _classify, _done
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.decoding.stepper import StepOutput, Stepper
from attnlens.model.decoding.vocabulary import Vocabulary


@dataclasses.dataclass
class _Source:
    """One source's search so far (mutable: it lives for one call only)."""

    settings: DecodeSettings  # the run's settings with this source's max_len
    live: tuple[Live, ...] = (Live((), 0.0, 0.0, 0, 0),)
    finished: tuple[Ended, ...] = ()
    step: int = 0
    done: bool = False


@torch.inference_mode()
def beam_texts(
    stepper: Stepper[Any],
    first: StepOutput[Any],
    prefix: Sequence[int],
    vocab: Vocabulary,
    settings: DecodeSettings,
    max_lens: Sequence[int],
) -> list[str]:
    """The best hypothesis' text of each row of `first` (one row per source, as `start_batch`
    gives them), each searched with settings (beam search, nothing forced) and its own
    maximum length, as `search` would find it for that source alone."""
    if settings.strategy != "beam" or settings.force:
        raise ValueError("beam_texts takes beam-search settings with no forced tokens")
    if len(max_lens) != first.log_probs.size(0):
        raise ValueError(f"{len(max_lens)} maximum lengths for {first.log_probs.size(0)} rows")
    sources = [_Source(dataclasses.replace(settings, max_len=m)) for m in max_lens]
    strategy, out, active = BeamSearch(settings.beam_size), first, list(range(len(sources)))
    device = first.log_probs.device
    for t in range(max(max_lens)):
        ids = [[*prefix, *h.ids] for s in active for h in sources[s].live]
        ranked = vocab.process(torch.tensor(ids, dtype=torch.long, device=device), out.log_probs)
        rows, tokens, still, offset = [], [], [], 0
        for s in active:
            source, n = sources[s], len(sources[s].live)
            mine = slice(offset, offset + n)
            scored = Scored(ranked[mine], ranked[mine], out.log_probs[mine])  # (n, V) ×3
            ranks = torch.tensor([h.ranked for h in source.live], device=device)  # (n,)
            proposal = strategy.propose(scored.choose, ranks, None)
            _, live, ended = _classify(proposal, source.live, t, source.settings, vocab, scored)
            source.finished += ended
            source.live, source.step = live, t
            source.done = _done(live, source.finished, source.settings, t)
            if not (source.done or t + 1 == source.settings.max_len):
                still.append(s)
                rows += [offset + h.parent for h in live]
                tokens += [h.ids[-1] for h in live]
            offset += n
        if not still:
            break
        state = stepper.reorder(out.state, torch.tensor(rows, device=device))
        out, active = stepper.step(state, torch.tensor(tokens, device=device)), still
    return [vocab.detokenize(_best(s).ids) for s in sources]


def _best(source: _Source) -> Ended:
    """The best by rank; if the maximum length stopped the search, live ones count (as the
    step loop's hypotheses are ranked)."""
    ended = list(source.finished)
    if not source.done:
        s = source.settings
        ended += [
            Ended(h.ids, h.score, rank_score(h.ranked, len(h.ids), _alpha(s), s.length_norm),
                  False, source.step, h.beam)
            for h in source.live
        ]  # fmt: skip
    return sorted(ended, key=lambda h: h.rank, reverse=True)[0]
