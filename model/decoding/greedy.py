"""Greedy decoding, written once: the choice of each next token (the argmax of the processed
scores) and the loop that stops at an end token or the maximum length, for one row or many.

The recording loop (`loop.iter_steps`) chooses through `Greedy`, which picks with `pick` from
`choice_scores`; everything that needs greedy outputs without a record runs `greedy_ids`: a
trace's output (`greedy_output`, one sequence) and `attnlens eval` and the experiments' task
scores (`training.evaluate.greedy_batch`, many sources side by side on the key/value cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.decoding.stepper import StepOutput, Stepper
from attnlens.model.decoding.strategy import Proposal, forced_proposal
from attnlens.model.decoding.vocabulary import Vocabulary


def choice_scores(out: StepOutput[Any], ids: torch.Tensor, vocab: Vocabulary) -> torch.Tensor:
    """What greedy and sampling choose from: the bans and processors on the raw logits when the
    model gives them (as `generate` does), else on its log-probabilities; ids (B, P + t)."""
    return vocab.process(ids, out.log_probs if out.logits is None else out.logits)  # (B, V)


def pick(scores: torch.Tensor) -> torch.Tensor:
    """The greedy choice of each row of scores (B, V): its best-scoring token."""
    return scores.argmax(dim=-1)  # (B,)


class Greedy:
    """The recording loop's greedy strategy: `pick` on its one live hypothesis."""

    def propose(
        self, log_probs: torch.Tensor, scores: torch.Tensor, forced: int | None
    ) -> Proposal:
        """The argmax of the single live hypothesis (or the forced token)."""
        if forced is not None:
            return forced_proposal(log_probs, scores, forced)
        return Proposal([0], pick(log_probs[:1]).tolist())


@torch.inference_mode()
def greedy_ids(
    stepper: Stepper[Any],
    first: StepOutput[Any],
    prefix: Sequence[int],
    vocab: Vocabulary,
    max_len: int,
) -> list[tuple[int, ...]]:
    """Greedy decoding of every row of `first` (what `start` or a batched start gave) side by
    side: each row's ids up to its first end token, included, or max_len of them. A row that
    has ended is still fed (its choices are dropped) until every row has ended."""
    out, (rows, size), device = first, first.log_probs.shape, first.log_probs.device
    end_ids = vocab.ends  # built on each read: once here, not once per row
    seqs = torch.tensor([list(prefix)] * rows, dtype=torch.long, device=device)  # (B, P)
    is_end = torch.zeros(size, dtype=torch.bool, device=device)  # (V,)
    is_end[sorted(end_ids)] = True
    done = torch.zeros(rows, dtype=torch.bool, device=device)  # (B,)
    for t in range(max_len):
        chosen = pick(choice_scores(out, seqs, vocab))  # (B,)
        seqs = torch.cat([seqs, chosen.unsqueeze(1)], dim=1)  # (B, P + t + 1)
        done |= is_end[chosen]  # (B,)
        if t + 1 == max_len or bool(done.all()):
            break
        out = stepper.step(out.state, chosen)
    return [_until_end(row, end_ids) for row in seqs[:, len(prefix) :].tolist()]


def _until_end(row: list[int], ends: frozenset[int]) -> tuple[int, ...]:
    """A row's ids up to and including its first end token (all of them if it has none)."""
    for i, token in enumerate(row):
        if token in ends:
            return tuple(row[: i + 1])
    return tuple(row)


def greedy_output(
    stepper: Stepper[Any],
    settings: DecodeSettings,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    vocab: Vocabulary,
) -> tuple[int, ...]:
    """The ids greedy decoding gives, the end token included when one was chosen: what
    `search` finds as its best hypothesis for these settings, by the same scoring and choice,
    with nothing recorded (for a caller that needs the output alone, as a trace teacher-forced
    on it does; recording each step took about a fifth of Explore's decoding)."""
    if settings.strategy != "greedy" or settings.force:
        raise ValueError("greedy_output takes plain greedy settings (no forced tokens)")
    first = stepper.start(source, prefix, settings.ablate)
    return greedy_ids(stepper, first, prefix, vocab, settings.max_len)[0]
