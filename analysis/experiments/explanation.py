"""Is attention an explanation? Input erasure for one output token (Abnar & Zuidema 2020).

Each input token is replaced, one at a time, by the model's <unk> (or pad) and the drop in the
output token's log-probability is its importance. The output token is the model's own: on a
decoder the most likely token after the text, on an encoder-decoder a token of its greedy
output. The attention that produced it comes with each case; viz.explanation ranks raw
attention, rollout and flow against the erasure scores.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from attnlens.analysis.experiments.common import Progress, applies, check_n, needed, no_progress
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.parts import TokenRuns
from attnlens.model.lenses.token_runs import TokenBatch, TokenSpace
from attnlens.record.erasure import ErasureCase
from attnlens.record.errors import InputError

HELD_OUT_POSITIONS = 24  # a decoder's held-out inputs: their first 24 tokens


def erased(ids: Sequence[int], positions: Sequence[int], erase: int) -> list[tuple[int, ...]]:
    """ids with each position in turn replaced by erase."""
    return [tuple(erase if i == k else t for i, t in enumerate(ids)) for k in positions]


def _text_positions(n: int, space: TokenSpace) -> list[int]:
    """The positions of a sequence of n ids that hold the text (not its markers)."""
    return list(range(len(space.prefix), n - len(space.suffix)))


def decoder_case(runs: TokenRuns, ids: Sequence[int]) -> ErasureCase:
    """The token a decoder-only model predicts after ids (its prefix first), explained by
    erasure."""
    space, T = runs.token_space(), len(ids)
    first = runs.run_tokens(TokenBatch([ids]))
    assert first.top is not None, "a decoder predicts"
    out = int(first.top[0, T - 1])
    full = (*ids, out)  # appended so that each run scores this token at position T - 1
    positions = _text_positions(T, space)
    run = runs.run_tokens(TokenBatch([full, *erased(full, positions, space.erase)]))
    assert run.logprobs is not None and run.decoder_self is not None
    scores = run.logprobs[:, T - 1]  # (1 + K',)
    erasure = np.full(T, np.nan)
    erasure[positions] = scores[0] - scores[1:]
    return ErasureCase(
        tuple(space.names[i] for i in ids),
        space.names[out],
        T - 1,
        float(scores[0]),
        erasure,
        None,
        run.decoder_self[0][:, :, :T, :T].copy(),
        None,
    )


def seq2seq_case(lens: Lens, text: str, output: int | None = None, seed: int = 0) -> ErasureCase:
    """One token of an encoder-decoder's greedy output (the output-th, default one drawn with
    seed), explained by erasing each source token."""
    runs = needed(lens.capabilities.token_runs, lens.capabilities, "token_runs")
    space, src = runs.token_space(), runs.token_ids(text)
    assert space.start is not None, "an encoder-decoder names its start token"
    index = {name: i for i, name in reversed(list(enumerate(space.names)))}
    produced = [index[t] for t in lens.decode(text).output_tokens]
    tokens = (space.start, *produced)
    if len(tokens) < 2:
        raise InputError(f"{lens.name} produced no output for {text!r} to explain")
    last = len(tokens) - 2
    t = random.Random(seed).randint(0, last) if output is None else output
    if not 0 <= t <= last:
        raise InputError(f"output token {t} does not exist: the output has tokens 0-{last}")
    positions = _text_positions(len(src), space)
    run = runs.run_tokens(
        TokenBatch([tokens] * (1 + len(positions)), [src, *erased(src, positions, space.erase)])
    )
    assert run.logprobs is not None and run.cross is not None
    scores = run.logprobs[:, t]  # (1 + K',)
    erasure = np.full(len(src), np.nan)
    erasure[positions] = scores[0] - scores[1:]
    return ErasureCase(
        tuple(space.names[i] for i in src),
        space.names[tokens[t + 1]],
        t,
        float(scores[0]),
        erasure,
        run.encoder_self[0].copy() if run.encoder_self is not None else None,
        run.decoder_self[0].copy() if run.decoder_self is not None else None,
        run.cross[0].copy(),
    )


def why_not(lens: Lens) -> str | None:
    """None where the model outputs tokens (a decoder or an encoder-decoder); else why not."""
    if lens.capabilities.decodes:
        return None
    return (
        f"{lens.name} is encoder-only: it outputs no token whose probability erasure could "
        "lower (the experiment needs a decoder or an encoder-decoder)"
    )


def erasure_case(lens: Lens, text: str, output: int | None = None, seed: int = 0) -> ErasureCase:
    """text's output token explained by erasure, whatever the model's architecture."""
    applies(why_not(lens))
    can = lens.capabilities
    if not can.takes_target:  # one sequence: the text, then the token it predicts
        if output is not None:
            raise InputError("a decoder-only model explains the token after the text")
        runs = needed(can.token_runs, can, "token_runs")
        return decoder_case(runs, runs.token_ids(text))
    return seq2seq_case(lens, text, output, seed)


def erasure_cases(
    lens: Lens, n: int = 50, seed: int = 0, progress: Progress = no_progress
) -> list[ErasureCase]:
    """Cases for n held-out inputs of the model's kind (one output token each); a decoder
    reads the first HELD_OUT_POSITIONS tokens of each text, as Abnar & Zuidema read short
    sentences (erasure and flow grow with the square of the length)."""
    applies(why_not(lens))
    can = lens.capabilities
    texts = needed(can.samples, can, "samples").sample_texts(check_n(n), seed)
    runs = needed(can.token_runs, can, "token_runs")
    cases = []
    for i, text in enumerate(texts):
        if not can.takes_target:
            cases.append(decoder_case(runs, runs.token_ids(text)[:HELD_OUT_POSITIONS]))
        else:
            cases.append(erasure_case(lens, text, seed=seed + i))
        progress(i + 1, len(texts), "erasing input tokens")
    return cases
