"""Head statistics: what each head attends to on average, and a tag for one-pattern heads."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from attnlens.analysis.norm_shares import shares, special_keys
from attnlens.record.picking import END_TOKENS, attention_of, earlier_matches, true_source_hits
from attnlens.record.summary import Summary
from attnlens.record.trace import Kind, Trace

SHARES = ("self", "previous", "first", "end", "induction")
TAGS = {"self": "self head", "previous": "previous-token head", "first": "first-token head",
        "end": "end-token head", "induction": "induction head"}  # fmt: skip
# beside the weight shares, what the keys gave (Kobayashi et al. 2020; analysis/norm_shares.py):
# the norm share of the first key, and the weight and norm shares of the special tokens
NORM_SHARES = ("first_norm", "special", "special_norm")
COLUMNS = ("kind", "layer", "head", "entropy", "mean_distance", *SHARES, *NORM_SHARES,
           "aligned", "tag")  # fmt: skip
INDUCTION_QUERIES = 4  # fewer queries with an induction key than this: too few to tell
ALIGNED_TAG = 0.8  # a cross head whose argmax is the true source this often is tagged


def head_statistics(
    trace: Trace,
    kinds: Sequence[Kind] | None = None,
    threshold: float = 0.5,
    reference: Sequence[int] | None = None,
) -> pd.DataFrame:
    """One row per (kind, layer, head): entropy (nats), mean |query − key|, shares and a tag.

    Shares are means over queries of the weight given to the query's own position, the one
    before it, position 0, and end-of-sentence tokens; NaN where a share has no meaning
    (self, previous and distance for cross-attention; end when no end token is present).
    "induction" is the weight on the token after the latest earlier occurrence of the query's
    own token (Olsson et al. 2022; the same pairs as the Heads page's induction figure), over
    the queries that have one; NaN when fewer than INDUCTION_QUERIES do (a text with no
    repeat, or one word said again, is too little to tell), and for cross-attention.
    With reference (the true source of each output token), "aligned" is the share of output
    tokens whose cross-attention argmax is their true source, and a cross head aligned at
    least ALIGNED_TAG of the time is tagged "alignment head"; otherwise NaN.
    """
    chosen = trace.kinds if kinds is None else kinds
    frames = [_kind_frame(trace, k, threshold, reference) for k in chosen]
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True)


def _kind_frame(
    trace: Trace, kind: Kind, threshold: float, reference: Sequence[int] | None
) -> pd.DataFrame:
    summary = (trace.summaries or {}).get(kind)
    if getattr(trace, kind) is None and summary is not None:  # kept as scores: long input
        stats = _summarised(trace, kind, summary)
        L, H = stats["entropy"].shape
        aligned = _aligned_by_layer(trace, kind, reference) if kind == "cross" else None
    else:
        w = attention_of(trace, kind)  # (L, H, Q, K) float32; sums accumulate in float64
        stats = _stats(w, trace.tokens(kind)[1], kind) | _norm_shares(trace, kind, w)
        L, H = stats["entropy"].shape
        aligned = _aligned(w, reference) if kind == "cross" else None
    layer, head = (a.ravel() for a in np.indices((L, H)))
    for name in NORM_SHARES:  # a record without norms, or an older long one: not guessed
        stats.setdefault(name, np.full((L, H), np.nan))
    stats["aligned"] = np.full((L, H), np.nan) if aligned is None else aligned
    columns = {"layer": layer, "head": head, **stats}
    frame = pd.DataFrame({"kind": kind, **{k: np.ravel(v) for k, v in columns.items()}})
    frame["tag"] = [_tag(row, threshold) for row in frame[list(SHARES)].to_numpy()]
    frame.loc[frame["aligned"] >= ALIGNED_TAG, "tag"] = "alignment head"
    return frame


def _summarised(trace: Trace, kind: Kind, summary: Summary) -> dict[str, np.ndarray]:
    """The statistics of a kind kept as scores, from the summaries the trace computed from its
    exact weights (record/scores.py): nothing of T² is rebuilt; the norm shares from the
    column sums of the first key and the special tokens it kept (the same definition as
    _norm_shares). A record written before the summaries held own, distance, end or the norm
    shares leaves those NaN (not known, not guessed)."""
    entropy = np.asarray(summary.entropy, dtype=np.float64)
    nan = np.full(entropy.shape, np.nan)
    square = kind != "cross"

    def kept(value: np.ndarray | None, where: bool = True) -> np.ndarray:
        return np.asarray(value, dtype=np.float64) if value is not None and where else nan

    enough = len(earlier_matches(trace.tokens(kind)[1])) >= INDUCTION_QUERIES
    return {
        "entropy": entropy,
        "mean_distance": kept(summary.distance, square),
        "self": kept(summary.own, square),
        "previous": kept(summary.previous, square and trace.tokens(kind)[0][1:] != ()),
        "first": kept(summary.first),
        "end": kept(summary.end),
        "induction": kept(summary.induction, square and enough),
        "first_norm": kept(summary.first_norm),
        "special": kept(summary.special),
        "special_norm": kept(summary.special_norm),
    }


def _norm_shares(trace: Trace, kind: Kind, w: np.ndarray) -> dict[str, np.ndarray]:
    """The first key's norm share and the special tokens' weight and norm shares, (L, H) each,
    from the weights' column sums and the record's norms; none where it has no norms."""
    if trace.norms is None or kind not in trace.norms:
        return {}
    received, carried = w.sum(2, dtype=np.float64), trace.norms[kind].carried  # (L, H, K)
    Q = w.shape[2]
    specials = special_keys(trace.tokens(kind)[1])
    special_weight, special_norm = shares(received, carried, Q, specials)
    nan = np.full(special_weight.shape, np.nan)
    return {
        "first_norm": shares(received, carried, Q, [0])[1],
        "special": special_weight if specials else nan,
        "special_norm": special_norm if specials else nan,
    }


def _aligned_by_layer(trace: Trace, kind: Kind, reference: Sequence[int] | None) -> np.ndarray:
    """_aligned of a kind kept as scores, one layer's heads rebuilt at a time (cross-attention:
    output rows × source keys, which the output's length bounds)."""
    L, H = trace.summaries[kind].entropy.shape  # type: ignore[index]
    if reference is None or len(reference) == 0:
        return np.full((L, H), np.nan)
    rows = slice(0, len(reference))
    hits = [
        true_source_hits(
            np.stack([trace.head(kind, i, h, rows) for h in range(H)])[None], reference
        )
        for i in range(L)
    ]
    share: np.ndarray = np.concatenate(hits) / len(reference)
    return share


def _aligned(w: np.ndarray, reference: Sequence[int] | None) -> np.ndarray:
    """(L, H) share of output rows whose argmax is the true source; NaN without a reference."""
    if reference is None or len(reference) == 0:
        return np.full(w.shape[:2], np.nan)
    share: np.ndarray = true_source_hits(w, reference) / len(reference)
    return share


def _stats(w: np.ndarray, keys: tuple[str, ...], kind: Kind) -> dict[str, np.ndarray]:
    """Each statistic as an (L, H) array (keys: the key tokens, the queries' too where square)."""
    L, H, Q, K = w.shape
    distance = np.abs(np.arange(Q)[:, None] - np.arange(K)[None, :]).astype(w.dtype)  # (Q, K)
    plogp = w * np.log(np.maximum(w, np.finfo(w.dtype).tiny))  # 0 · log 0 = 0
    nan = np.full((L, H), np.nan)
    square = kind != "cross"
    ends = np.array([t in END_TOKENS for t in keys])
    diag = np.diagonal(w, 0, 2, 3)  # (L, H, min(Q, K))
    prev = np.diagonal(w, -1, 2, 3)  # (L, H, Q - 1): query i → key i - 1
    return {
        "entropy": -plogp.sum(-1, dtype=np.float64).mean(-1),
        "mean_distance": (w * distance).sum(-1, dtype=np.float64).mean(-1) if square else nan,
        "self": diag.mean(-1, dtype=np.float64) if square else nan,
        "previous": prev.mean(-1, dtype=np.float64) if square and Q > 1 else nan,
        "first": w[..., 0].mean(-1, dtype=np.float64),
        "end": w[..., ends].sum(-1, dtype=np.float64).mean(-1) if ends.any() else nan,
        "induction": _induction(w, keys) if square else nan,
    }


def _induction(w: np.ndarray, tokens: Sequence[str]) -> np.ndarray:
    """(L, H) mean weight on the induction key of each query that has one (NaN for too few)."""
    matches = earlier_matches(tokens)
    if len(matches) < INDUCTION_QUERIES:
        return np.full(w.shape[:2], np.nan)
    queries, keys = [q for q, _ in matches], [j + 1 for _, j in matches]
    share: np.ndarray = w[:, :, queries, keys].mean(-1, dtype=np.float64)
    return share


def _tag(shares: np.ndarray, threshold: float) -> str:
    """The pattern holding the largest share, if that share reaches the threshold; else ''."""
    if np.isnan(shares).all():
        return ""
    best = int(np.nanargmax(shares))
    return TAGS[SHARES[best]] if shares[best] >= threshold else ""
