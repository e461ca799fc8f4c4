"""What the experiments ask of a lens (analysis/experiments/): batches of token ids in, attention
and log-probabilities (an encoder: its output) out, with heads ablated (our models: through
their head mask; Hugging Face models: in a private copy with the head's share of W^O zeroed);
and, on a model of one of our tasks, scores of its answers. All by return value, numpy on the
CPU."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

Search = Literal["greedy", "beam"]
EXPERIMENT_BEAM = 4  # the beam width the experiments' beam-search scores use


@dataclass(frozen=True)
class TokenSpace:
    """How a model's sequences are made of ids: what it puts around a text, the ids a random
    sequence may draw, and what stands in for an erased token."""

    prefix: tuple[int, ...]  # before the text (<s>, [CLS], a model's BOS)
    suffix: tuple[int, ...]  # after it ([SEP]; our encoders' </s>)
    ordinary: tuple[int, ...]  # ids of ordinary tokens (no specials)
    erase: int  # what replaces an erased input token (<unk>, or the model's pad)
    names: tuple[str, ...]  # every id's token string
    start: int | None = None  # an encoder-decoder's decoder start token


@dataclass(frozen=True)
class TokenBatch:
    """Sequences of ids, of any lengths (the lens pads them). For a single-stack model
    `tokens` is the sequence (a decoder's starts with its prefix); an encoder-decoder reads
    `source` and is teacher-forced on `tokens` (start token first)."""

    tokens: Sequence[Sequence[int]]
    source: Sequence[Sequence[int]] | None = None


@dataclass(frozen=True)
class TokenRun:
    """Attention and next-token log-probabilities of a TokenBatch, padded to the longest
    sequence: entries past a sequence's length are NaN (attention rows, hidden states) or 0
    (keys)."""

    encoder_self: np.ndarray | None  # (B, L, H, S, S)
    decoder_self: np.ndarray | None  # (B, L, H, T, T)
    cross: np.ndarray | None  # (B, L, H, T, S)
    logprobs: np.ndarray | None  # (B, T - 1): log p(tokens[t + 1] | what came before); decoders
    top: np.ndarray | None  # (B, T): the most likely next id at each position; decoders
    hidden: np.ndarray | None = None  # (B, T, d_model): an encoder-only model's output


def without_attention(run: TokenRun) -> TokenRun:
    """The run's outputs alone, its attention dropped (what an ablation's score reads)."""
    return replace(run, encoder_self=None, decoder_self=None, cross=None)


@dataclass(frozen=True)
class TaskScores:
    """A task model's answers to examples, one entry per example."""

    exact: np.ndarray  # (B,) bool: the decoded output equals the reference target
    loglik: np.ndarray  # (B,) log p(reference target, end token included), teacher-forced
    tokens: np.ndarray  # (B,) how many tokens that log-likelihood covers
