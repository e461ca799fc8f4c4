"""One head's window of αᵢⱼ ‖f_h(xⱼ)‖ pooled into blocks on demand (Explore's norm measure of a
zoomed window; the whole head's overviews are the record's own), by the code that pools every
head at trace time (pooling.py) run for that one head over that window: its queries, keys and
exact log-sum-exps as the record keeps them, and its keys' carried norms. At 8,192 positions a
whole head takes about 0.13 s, where a row-block loop over Trace.head rebuilt T² weights in
float64 and took seconds."""

from __future__ import annotations

import numpy as np
import torch

from attnlens.model.lenses.pooling import Pooled, Scoring, pool
from attnlens.model.lenses.summaries import kept_tensor
from attnlens.record.scores import LayerScores, MaskRule
from attnlens.record.summary import edges
from attnlens.record.trace import Kind, Trace


def kept_as_scores(trace: Trace, kind: Kind) -> bool:
    """Whether the record keeps this kind as scores (a long input), not as weights."""
    return bool(trace.scores and kind in trace.scores and getattr(trace, kind) is None)


def norm_blocks(
    trace: Trace, kind: Kind, layer: int, head: int, row_e: np.ndarray, col_e: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(B_q, B_k) float32 each: the largest and the mean αᵢⱼ ‖f_h(xⱼ)‖ of each block of one
    head's window, the blocks as edges(n, B) lays them from the window's first position (a
    masked cell counts as 0 in the mean, as in the record's overview). A ValueError where the
    kind keeps weights (pool those directly) or the record has no norms (saying why)."""
    if not kept_as_scores(trace, kind):
        raise ValueError(f"{kind} is kept as weights here, not as scores: pool its weights")
    carried = trace.head_norms(kind).carried[layer, head]  # (K,)
    layer_scores = trace.scores[kind][layer]  # type: ignore[index]
    r0, r1, c0, c1 = int(row_e[0]), int(row_e[-1]), int(col_e[0]), int(col_e[-1])
    sides = [
        side
        for side in {len(row_e) - 1, len(col_e) - 1}
        if np.array_equal(row_e, r0 + edges(r1 - r0, side))
        and np.array_equal(col_e, c0 + edges(c1 - c0, side))
    ]
    if not sides:
        raise ValueError("the blocks must be edges(n, B) from the window's first position")
    side = sides[0]
    pooled = _pooled_window(layer_scores, head, (r0, r1), (c0, c1), side, carried[c0:c1])
    assert pooled.norm_max is not None and pooled.norm_mean is not None
    return pooled.norm_max[0], pooled.norm_mean[0]


def _pooled_window(
    layer: LayerScores,
    head: int,
    rows: tuple[int, int],
    cols: tuple[int, int],
    side: int,
    carried: np.ndarray,
) -> Pooled:
    """pool() of one head's rows × cols: its mask's offset, and a bias by distance, moved to
    the window's first row and key."""
    (r0, r1), (c0, c1), Q = rows, cols, layer.shape[1]
    kv = layer.key_head(head)
    # copies (one head: small), as a record's arrays may be read-only
    q = kept_tensor(np.array(layer.q[head : head + 1, r0:r1]), layer.dtype)  # (1, Q', d)
    k = kept_tensor(np.array(layer.k[kv : kv + 1, c0:c1]), layer.dtype)  # (1, K', d)
    lse = torch.from_numpy(np.array(layer.lse[head : head + 1, r0:r1]))
    mask = layer.mask
    rule = MaskRule(mask.causal, mask.window, mask.offset + r0 - c0)
    bias = None
    if layer.bias is not None:  # at [h, j − i + Q − 1]: the window's j' − i' + Q' − 1 there
        start = c0 - r0 + Q - (r1 - r0)
        wide = layer.bias[head : head + 1, start : start + (r1 - r0) + (c1 - c0) - 1]
        bias = torch.from_numpy(np.ascontiguousarray(wide))
    scoring = Scoring(layer.scale, rule, layer.softcap, bias)
    norms = torch.from_numpy(np.ascontiguousarray(carried, dtype=np.float32)).unsqueeze(0)
    return pool(q, k, lse, scoring, side, norms)
