"""Every head's overview and statistics at trace time, from its exact weights, a tile at a time
(record/scores.py's Summary).

The weights are rebuilt from what the kernel computed them from, pᵢⱼ = exp(scoreᵢⱼ − lseᵢ),
one tile at a time: one block of overview rows, the query heads that share one key head, and at
most TILE_COLUMNS keys (about a megabyte of scores, so every pass over it stays in the cache),
reduced and dropped: the trace never holds a head's T × T. Keys a causal or windowed mask cannot
reach from a tile's rows are not computed at all (their weight is exactly 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from attnlens.record.scores import LayerScores, MaskRule, Summary, edges

OVERVIEW = 128  # at most this many blocks a side: 64 KB a head in float16, max and mean
TILE_CELLS = 1 << 19  # scores in one tile: 1 MB of float32
LOG2E, LN2 = 1 / math.log(2), math.log(2)


def summarise(
    layers: Sequence[LayerScores], matches: Sequence[tuple[int, int]], ends: Sequence[int] = ()
) -> Summary:
    """The Summary of one kind; matches: (query, key) pairs of the induction statistic; ends:
    the positions of end tokens among the keys. Each layer's numbers go straight into the
    record's arrays (float16 overviews)."""
    H, Q, K = layers[0].shape
    rows, cols = edges(Q, OVERVIEW), edges(K, OVERVIEW)
    pairs = torch.tensor(list(matches), dtype=torch.long).reshape(-1, 2)  # (M, 2)
    shape = (len(layers), H, len(rows) - 1, len(cols) - 1)
    out = {"max": np.empty(shape, np.float16), "mean": np.empty(shape, np.float16)}
    out |= {name: np.empty((len(layers), H), np.float32) for name in POINTS}
    at_ends = torch.tensor(sorted(set(ends)), dtype=torch.long)
    for i, layer in enumerate(layers):
        for name, value in _layer(layer, rows, cols, pairs, at_ends).items():
            out[name][i] = value
    return Summary(
        overview_max=out["max"],
        overview_mean=out["mean"],
        row_edges=rows,
        col_edges=cols,
        entropy=out["entropy"],
        previous=out["previous"],
        first=out["first"],
        induction=out["induction"],
        own=out["own"],
        distance=out["distance"],
        end=out["end"],
    )


POINTS = ("entropy", "previous", "first", "induction", "own", "distance", "end")
PAIRS_AT_ONCE = 1 << 16  # (query, end key) pairs weighed at once: H × this floats


@torch.inference_mode()
def _layer(
    layer: LayerScores, rows: np.ndarray, cols: np.ndarray, pairs: torch.Tensor, ends: torch.Tensor
) -> dict[str, np.ndarray]:
    """One layer's overview (H, B_q, B_k) and statistics (H,), a tile at a time: every head,
    whole blocks of rows (several where a row is short) and of keys."""
    H, Q, K = layer.shape
    q, k = torch.from_numpy(layer.q), torch.from_numpy(layer.k)  # (H, Q, d), (H_kv, K, d)
    lse = torch.from_numpy(layer.lse)  # (H, Q)
    # the tiles' queries scaled once for the layer (a pass over every tile saved), by
    # log₂e as well: scores come out in base 2; a soft cap needs the plain score first
    q_tiles = q if layer.softcap is not None else q * (layer.scale * LOG2E)
    h, w = int(rows[1] - rows[0]), int(cols[1] - cols[0])  # block height and width
    span = max(w, TILE_CELLS // (H * h) // w * w)  # keys a tile: whole blocks
    height = h * max(1, TILE_CELLS // (H * h * K)) if span >= K else h  # rows a tile
    acc = _Sums(H, len(rows) - 1, len(cols) - 1, h, w)
    for r0 in range(0, Q, height):
        r1 = min(Q, r0 + height)
        c_lo, c_hi = _reach(layer.mask, r0, r1, K, w)
        for end in range(-(-c_hi // w) * w, c_lo, -span):  # from the diagonal back
            c0, c1 = max(c_lo, end - span), min(end, c_hi)  # the short tile is the first
            p, log2p = _tile(layer, q_tiles[:, r0:r1], k[:, c0:c1], lse[:, r0:r1], r0, c0)
            acc.add(p, log2p, r0, c0)
    return (
        acc.result(rows, cols, Q)
        | _points(layer, q, k, lse, pairs)
        | {"end": _end(layer, q, k, lse, ends)}
    )


def _points(
    layer: LayerScores, q: torch.Tensor, k: torch.Tensor, lse: torch.Tensor, pairs: torch.Tensor
) -> dict[str, np.ndarray]:
    """The statistics that read one key per query: the first key, the query's own position,
    the key just before it, the induction key; each weight computed alone, O(T) per head."""
    H, Q, K = layer.shape
    rule, rows = layer.mask, torch.arange(Q)
    own, before = rows + rule.offset, rows + rule.offset - 1  # may fall outside the keys
    mine, prior = (own >= 0) & (own < K), (before >= 0) & (before < K)  # (a cross layer's)
    wanted = {
        "first": (rows, torch.zeros_like(rows)),
        "own": (rows[mine], own[mine]),
        "previous": (rows[prior], before[prior]),
        "induction": (pairs[:, 0], pairs[:, 1]),
    }
    out = {}
    for name, (qi, kj) in wanted.items():
        if not len(qi):
            out[name] = np.full(H, np.nan, dtype=np.float32)
            continue
        out[name] = _weights_at(layer, q, k, lse, qi, kj).mean(-1).numpy()
    return out


def _end(
    layer: LayerScores, q: torch.Tensor, k: torch.Tensor, lse: torch.Tensor, ends: torch.Tensor
) -> np.ndarray:
    """(H,): the mean over queries of the weight on end-token keys (NaN without any), the
    (query, end key) pairs weighed PAIRS_AT_ONCE at a time."""
    H, Q, _ = layer.shape
    if not len(ends):
        return np.full(H, np.nan, dtype=np.float32)
    total = torch.zeros(H, dtype=torch.float64)
    step = max(1, PAIRS_AT_ONCE // len(ends))
    for r0 in range(0, Q, step):
        qi = torch.arange(r0, min(Q, r0 + step)).repeat_interleave(len(ends))
        kj = ends.repeat(len(qi) // len(ends))
        total += _weights_at(layer, q, k, lse, qi, kj).sum(-1, dtype=torch.float64)
    return (total / Q).float().numpy()


def _weights_at(
    layer: LayerScores,
    q: torch.Tensor,
    k: torch.Tensor,
    lse: torch.Tensor,
    qi: torch.Tensor,
    kj: torch.Tensor,
) -> torch.Tensor:
    """(H, n): the exact weight of query qi[m] on key kj[m] in every head (0 where masked)."""
    H_kv, group = k.size(0), q.size(0) // k.size(0)
    keys = k[:, kj].unsqueeze(1)  # (H_kv, 1, n, d): each key head once, for its query heads
    s = (q[:, qi].view(H_kv, group, len(qi), -1) * keys).sum(-1).view(-1, len(qi))  # (H, n)
    s = s * layer.scale
    if layer.softcap is not None:
        s = layer.softcap * torch.tanh(s / layer.softcap)
    if layer.bias is not None:
        s = s + torch.from_numpy(layer.bias)[:, kj - qi + (layer.shape[1] - 1)]
    ok = layer.mask.allows(qi.numpy(), kj.numpy())
    w = (s - lse[:, qi]).exp()
    return w if ok is None else w * torch.from_numpy(ok)


def _reach(rule: MaskRule, r0: int, r1: int, K: int, w: int) -> tuple[int, int]:
    """The keys rows r0..r1-1 may attend to, widened to whole column blocks (K ends the last)."""
    c1 = min(K, r1 + rule.offset) if rule.causal else K
    c0 = max(0, r0 + rule.offset - rule.window + 1) if rule.window else 0
    c0, c1 = c0 // w * w, min(K, -(-c1 // w) * w)
    return c0, max(c1, c0 + 1)


def _tile(
    layer: LayerScores, q: torch.Tensor, k: torch.Tensor, lse: torch.Tensor, r0: int, c0: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact weights, and their base-2 logs, (H, r, c) each, of every head's rows r0.. × keys
    c0..: pᵢⱼ = 2^(log₂e · (scoreᵢⱼ − lseᵢ)), the same number as exp, in half exp's time. q:
    already scaled by scale · log₂e, unless the layer caps its logits (then as recorded)."""
    H, r, d = q.shape
    H_kv, c, _ = k.shape
    log2p = (q.reshape(H_kv, H // H_kv * r, d) @ k.transpose(-1, -2)).view(H, r, c)
    if layer.softcap is not None:
        log2p = layer.softcap * torch.tanh(log2p * (layer.scale / layer.softcap)) * LOG2E
    if layer.bias is not None:  # by distance j − i: a (r, c) gather per head
        Q = layer.shape[1]
        at = torch.arange(c0, c0 + c).unsqueeze(0) - torch.arange(r0, r0 + r).unsqueeze(1)
        log2p.add_(torch.from_numpy(layer.bias)[:, at + (Q - 1)].mul_(LOG2E))
    blocked = _blocked(layer.mask, r0, r, c0, c)
    if blocked is not None:
        log2p.add_(blocked)
    log2p.sub_(lse.unsqueeze(-1) * LOG2E)
    return torch.exp2(log2p), log2p


def _blocked(rule: MaskRule, r0: int, r: int, c0: int, c: int) -> torch.Tensor | None:
    """(r, c): -inf where the rule masks (row, key), 0 elsewhere; None when it masks none of
    the tile (a tile wholly before the diagonal and inside the window, or no mask)."""
    pos = torch.arange(r0, r0 + r).unsqueeze(1) + rule.offset  # (r, 1)
    key = torch.arange(c0, c0 + c).unsqueeze(0)  # (1, c)
    last_key, first_pos, last_pos = c0 + c - 1, r0 + rule.offset, r0 + r - 1 + rule.offset
    causal_cut = rule.causal and last_key > first_pos
    window_cut = rule.window is not None and last_pos - c0 >= rule.window
    if not (causal_cut or window_cut):
        return None
    ok = (key <= pos) if rule.causal else torch.ones(r, c, dtype=torch.bool)
    if rule.window is not None:
        ok &= pos - key < rule.window
    return torch.zeros(r, c).masked_fill_(~ok, float("-inf"))


class _Sums:
    """A layer's block maxima and sums, and each head's entropy, filled a tile at a time."""

    def __init__(self, H: int, B_q: int, B_k: int, h: int, w: int) -> None:
        self.h, self.w = h, w
        self.max = torch.zeros(H, B_q, B_k)
        self.sum = torch.zeros(H, B_q, B_k, dtype=torch.float64)
        self.entropy = torch.zeros(H, dtype=torch.float64)
        self.distance = torch.zeros(H, dtype=torch.float64)

    def add(self, p: torch.Tensor, log2p: torch.Tensor, r0: int, c0: int) -> None:
        """A tile whose rows start at a block's first row (r0) and keys at one's (c0)."""
        H, r, c = p.shape
        # Σ pᵢⱼ |i − j| in one pass over the tile: the distances are the same for every head
        far = (torch.arange(r0, r0 + r).unsqueeze(1) - torch.arange(c0, c0 + c)).abs_()
        self.distance += p.reshape(H, -1) @ far.reshape(-1).to(p.dtype)
        n_r, n_c = -(-r // self.h), -(-c // self.w)  # blocks it touches
        if (n_r * self.h, n_c * self.w) != (r, c):  # an edge tile: zeros change no max or sum
            p = torch.nn.functional.pad(p, (0, n_c * self.w - c, 0, n_r * self.h - r))
        # each block's cells copied next to each other once, then reduced where they lie
        # contiguous: a max over a strided dimension (a block's rows, or its keys a few at a
        # time) took a third of the layer's time, four times this copy and its reductions
        cells = (
            p.view(H, n_r, self.h, n_c, self.w)
            .permute(0, 1, 3, 2, 4)
            .reshape(H, n_r, n_c, self.h * self.w)
        )
        at = (
            slice(None),
            slice(r0 // self.h, r0 // self.h + n_r),
            slice(c0 // self.w, c0 // self.w + n_c),
        )
        self.max[at] = torch.maximum(self.max[at], cells.amax(-1))
        self.sum[at] += cells.sum(-1)
        self.entropy -= torch.nansum(log2p.mul_(p[:, :r, :c]), (1, 2)) * LN2  # 0 · log 0 = 0

    def result(self, rows: np.ndarray, cols: np.ndarray, Q: int) -> dict[str, np.ndarray]:
        cells = np.outer(np.diff(rows), np.diff(cols))  # (B_q, B_k)
        return {
            "max": self.max.numpy(),
            "mean": (self.sum.numpy() / cells).astype(np.float32),
            "entropy": (self.entropy / Q).float().numpy(),
            "distance": (self.distance / Q).float().numpy(),
        }
