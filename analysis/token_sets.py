"""A set of tokens chosen by the user, and its attention in every layer and head at once.

A query set: where those queries look, the mean of their rows (one distribution over the keys
per head). A key set: how much attention those keys receive, each query's weight summed over
the set (one share per query per head), and per head its mean over the queries.

Both come from the record one tile at a time (`Trace.head`, exact from what the kernel computed
its weights from, or the stored weights): a query set reads only its own rows, |S| × K weights a
head; a key set only its own columns, Q × |S| a head, in blocks of at most TILE_CELLS. No step
holds a head's T × T, and what is kept is O(L · H · T): the profile of every head.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from attnlens.record.norms import Measure, check_measure
from attnlens.record.scores import LayerScores
from attnlens.record.trace import Kind, Trace

Side = Literal["queries", "keys"]
SIDES: tuple[Side, ...] = ("queries", "keys")
ONE = {"queries": "query", "keys": "key"}
TILE_CELLS = 1 << 21  # weights one step of a key set computes: 8 MB of float32
# the most weights one set may need in every head: ~10 s of CPU (512 positions in every head of
# Llama-3.2-1B's shape at 8,192 tokens; any set of GPT-2 small at 1,024)
MAX_WEIGHTS = 1 << 31
_RANGE = re.compile(r"^(\d+)\s*(?:-|–|\.\.)\s*(\d+)$")


@dataclass(frozen=True, eq=False)
class SetAttention:
    """One token set's attention in every head of one kind.

    side "queries": profile[l, h, j] is the mean over the set's queries of their weight on key
    j; a head's summary is its largest, on key peak[l, h] (where the set looks most).
    side "keys": profile[l, h, i] is query i's weight summed over the set's keys; a head's
    summary is its mean over every query (the share of all attention the set receives)."""

    kind: Kind
    side: Side
    positions: tuple[int, ...]  # the set, sorted, on its side
    profile: np.ndarray  # (L, H, N) float32 (summed in float64): N keys (query set) or queries
    summary: np.ndarray  # (L, H) float64
    peak: np.ndarray | None  # (L, H) int64: the key of the largest mean weight; keys: None
    measure: Measure = "weight"  # norm: every αᵢⱼ above is αᵢⱼ ‖f_h(xⱼ)‖ (record/norms.py)


def set_attention(
    trace: Trace, kind: Kind, side: Side, positions: tuple[int, ...], measure: Measure = "weight"
) -> SetAttention:
    """The attention of a set of query or key positions of one kind, in every head; measure
    "norm": of αᵢⱼ ‖f_h(xⱼ)‖, what each key gave each head's output, in place of αᵢⱼ."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}, got {side!r}")
    if kind not in trace.kinds:
        there = ", ".join(trace.kinds) or "none"
        raise ValueError(f"{trace.model.name} records no {kind} attention; it has {there}")
    queries, keys = trace.tokens(kind)
    n = len(queries) if side == "queries" else len(keys)
    chosen = check_positions(positions, n, side)
    if check_measure(measure) == "norm":
        trace.head_norms(kind)  # a record without norms says so before any work
    L, H = trace.model.shape(kind)
    check_cost(len(chosen), len(keys) if side == "queries" else len(queries), L * H, side)
    if side == "queries":
        profile = np.stack([[_mean_rows(trace, kind, lay, h, chosen, measure) for h in range(H)]
                            for lay in range(L)])  # fmt: skip
        peak = profile.argmax(-1)
        summary = np.take_along_axis(profile, peak[..., None], -1)[..., 0]
        kept = profile.astype(np.float32)  # half the memory a session holds: 17 MB at 8,192
        return SetAttention(kind, side, tuple(int(p) for p in chosen), kept, summary, peak,
                            measure)  # fmt: skip
    profile = np.stack([[_received(trace, kind, lay, h, chosen, measure) for h in range(H)]
                        for lay in range(L)])  # fmt: skip
    summary = profile.mean(-1)
    kept = profile.astype(np.float32)
    return SetAttention(kind, side, tuple(int(p) for p in chosen), kept, summary, None, measure)


def check_cost(size: int, across: int, heads: int, side: Side) -> None:
    """A ValueError naming the set's size and the largest that fits when its weights in every
    head (size × across × heads) are past MAX_WEIGHTS."""
    weights = size * across * heads
    if weights > MAX_WEIGHTS:
        most = MAX_WEIGHTS // (across * heads)
        raise ValueError(
            f"a set of {size:,} {side} needs {weights / 1e9:.1f} G weights ({heads} heads × "
            f"{across:,} positions a {ONE[side]}); at most {most:,} {side} fit "
            f"({MAX_WEIGHTS / 1e9:.1f} G weights): name fewer"
        )


def check_positions(positions: tuple[int, ...], n: int, side: Side) -> np.ndarray:
    """The positions sorted and without repeats; a ValueError naming one out of 0..n-1, or
    saying the set is empty."""
    if not positions:
        raise ValueError(f"the set of {side} is empty: name at least one position")
    for p in positions:
        if not 0 <= p < n:
            raise ValueError(f"position {p} is outside 0..{n - 1} ({n} {side})")
    return np.unique(np.asarray(positions, dtype=np.int64))


def _mean_rows(
    trace: Trace, kind: Kind, layer: int, head: int, rows: np.ndarray, measure: Measure
) -> np.ndarray:
    """(K,) float64: the mean of the set's rows of one head, a block of rows at a time, over
    the keys the set's rows may reach (the rest are exactly 0)."""
    K = len(trace.tokens(kind)[1])
    rule = _kept_layer(trace, kind, layer)
    lo, hi = (0, K) if rule is None else rule.reach(int(rows[0]), int(rows[-1]) + 1)
    step = max(1, TILE_CELLS // max(hi - lo, 1))
    total = np.zeros(K, dtype=np.float64)
    for start in range(0, len(rows), step):
        tile = trace.head(kind, layer, head, rows[start : start + step], slice(lo, hi), measure)
        total[lo:hi] += np.ones(len(tile)) @ tile  # in float64: 5× sum(0, dtype=float64)
    return total / len(rows)


def _received(
    trace: Trace, kind: Kind, layer: int, head: int, cols: np.ndarray, measure: Measure
) -> np.ndarray:
    """(Q,) float64: each query's weight summed over the set's keys, a block of queries at a
    time (only the set's columns are computed, Q × |S| weights a head, and only for the
    queries that may reach one of them: the rest are exactly 0)."""
    Q = len(trace.tokens(kind)[0])
    lo, hi = _reaching(_kept_layer(trace, kind, layer), int(cols[0]), int(cols[-1]), Q)
    out = np.zeros(Q, dtype=np.float64)
    width = min(len(cols), TILE_CELLS)
    step = max(1, TILE_CELLS // width)
    for c0 in range(0, len(cols), width):
        part = cols[c0 : c0 + width]
        for r0 in range(lo, hi, step):
            r1 = min(hi, r0 + step)
            tile = trace.head(kind, layer, head, slice(r0, r1), part, measure)  # (r, c)
            out[r0:r1] += tile.sum(1, dtype=np.float64)
    return out


def _kept_layer(trace: Trace, kind: Kind, layer: int) -> LayerScores | None:
    """The layer as a scores record keeps it (its mask a rule), or None for stored weights."""
    if trace.scores and kind in trace.scores and getattr(trace, kind) is None:
        return trace.scores[kind][layer]
    return None


def _reaching(layer: LayerScores | None, first: int, last: int, Q: int) -> tuple[int, int]:
    """The queries that may attend to a key between first and last, as one range."""
    if layer is None:
        return 0, Q
    rule = layer.mask
    lo = max(0, first - rule.offset) if rule.causal else 0
    hi = min(Q, last + rule.window - rule.offset) if rule.window else Q
    return lo, max(lo, hi)


def parse_positions(text: str, tokens: tuple[str, ...], side: Side) -> tuple[int, ...]:
    """The positions a typed set names: comma-separated items, each a position (`12`), a range
    (`40-60`, both ends in) or a word or phrase, which names every place its tokens spell it
    (case and surrounding spaces aside). A ValueError naming the item that names nothing."""
    found: list[int] = []
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise ValueError(f"the set of {side} is empty: type a word, a position or a range")
    for item in items:
        if not item:
            continue
        found += _item_positions(item, tokens, side)
    check_positions(tuple(found), len(tokens), side)
    return tuple(sorted(set(found)))


def _item_positions(item: str, tokens: tuple[str, ...], side: Side) -> list[int]:
    """The positions one item of a typed set names."""
    n = len(tokens)
    if item.isdigit():
        return [int(item)]
    ranged = _RANGE.match(item)
    if ranged is not None:
        lo, hi = int(ranged[1]), int(ranged[2])
        if lo > hi:
            raise ValueError(f"the range {item!r} runs backwards: write it {hi}-{lo}")
        for end in (lo, hi):
            if end >= n:
                raise ValueError(f"position {end} is outside 0..{n - 1} ({n} {side})")
        return list(range(lo, hi + 1))
    where = find_word(item, tokens)
    if not where:
        raise ValueError(f"no {ONE[side]} token spells {item!r} in this text")
    return where


def find_word(word: str, tokens: tuple[str, ...]) -> list[int]:
    """Every position of a word: a token that reads as it, or a run of consecutive tokens
    that spell it together (a word split into subwords, or a phrase: its spaces aside), each
    of their positions."""
    wanted = "".join(word.split()).casefold()
    pieces = [_plain(t) for t in tokens]
    found: list[int] = []
    for start in range(len(tokens)):
        if not pieces[start] or not wanted.startswith(pieces[start]):
            continue
        spelled, stop = "", start
        while stop < len(tokens) and len(spelled) < len(wanted):
            spelled += pieces[stop]
            stop += 1
        if spelled == wanted:
            found += range(start, stop)
    return sorted(set(found))


def _plain(token: str) -> str:
    """A token as compared with a typed word: no surrounding space, no subword mark, any case."""
    text = token.strip()
    return (text[2:] if text.startswith("##") else text).casefold()
