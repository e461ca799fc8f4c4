"""Every head's overview and statistics at trace time, from its exact weights (record/summary.py's
Summary), and each row's log-sum-exp made exact to float64 on the way (model/lenses/pooling.py).

The layers are pooled side by side, one per thread, each thread's torch on one thread of its
own: a tile's dozen operations then run where they are called, with no parallel region to
share and wait on (two torch threads over each small operation cost 5-20 times the CPU of one
on a busy machine). The statistics that read one key per query (the first key, the query's own,
the one before it, the induction key, end tokens) are computed alone, O(T) a head, in float64.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import torch

from attnlens.model.lenses.pooling import OVERVIEW, Pooled, Scoring, pool
from attnlens.record.scores import LayerScores
from attnlens.record.summary import Summary, edges

POINTS = ("previous", "first", "induction", "own", "end")
PAIRS_AT_ONCE = 1 << 16  # (query, end key) pairs weighed at once: H × this floats


def summarise(
    layers: Sequence[LayerScores], matches: Sequence[tuple[int, int]], ends: Sequence[int] = ()
) -> tuple[Summary, tuple[LayerScores, ...]]:
    """The Summary of one kind, and its layers with each row's log-sum-exp exact to float64;
    matches: (query, key) pairs of the induction statistic; ends: the positions of end tokens
    among the keys. Each layer's numbers go straight into the record's arrays (float16
    overviews)."""
    with _one_torch_thread_each() as workers:
        pooled = list(workers.map(_pooled, layers))
    exact = tuple(replace(layer, lse=p.lse) for layer, p in zip(layers, pooled, strict=True))
    _, Q, K = layers[0].shape
    pairs = torch.tensor(list(matches), dtype=torch.long).reshape(-1, 2)  # (M, 2)
    at_ends = torch.tensor(sorted(set(ends)), dtype=torch.long)
    points = [_points(layer, pairs, at_ends) for layer in exact]
    return Summary(
        overview_max=np.stack([p.max for p in pooled]).astype(np.float16),
        overview_mean=np.stack([p.mean for p in pooled]).astype(np.float16),
        row_edges=edges(Q, OVERVIEW),
        col_edges=edges(K, OVERVIEW),
        entropy=np.stack([p.entropy for p in pooled]),
        distance=np.stack([p.distance for p in pooled]),
        **{name: np.stack([row[name] for row in points]) for name in POINTS},
    ), exact


@contextlib.contextmanager
def _one_torch_thread_each() -> Iterator[ThreadPoolExecutor]:
    """As many worker threads as torch had threads, torch on one thread meanwhile."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(threads, thread_name_prefix="attnlens-summary") as workers:
            yield workers
    finally:
        torch.set_num_threads(threads)


def _pooled(layer: LayerScores) -> Pooled:
    bias = None if layer.bias is None else torch.from_numpy(layer.bias)
    scoring = Scoring(layer.scale, layer.mask, layer.softcap, bias)
    return pool(_tensor(layer.q, layer.dtype), _tensor(layer.k, layer.dtype),
                torch.from_numpy(layer.lse), scoring)  # fmt: skip


def _tensor(a: np.ndarray, dtype: str) -> torch.Tensor:
    """A kept array as a tensor of the dtype the kernel read (bfloat16 from its 16-bit words),
    sharing its memory."""
    t = torch.from_numpy(a)
    return t.view(torch.bfloat16) if dtype == "bfloat16" else t


@torch.inference_mode()
def _points(layer: LayerScores, pairs: torch.Tensor, ends: torch.Tensor) -> dict[str, np.ndarray]:
    """The statistics that read one key per query: the first key, the query's own position,
    the key just before it, the induction key, end tokens; each weight computed alone."""
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
        out[name] = _weights_at(layer, qi, kj).mean(-1).float().numpy()
    out["end"] = _end(layer, ends)
    return out


def _end(layer: LayerScores, ends: torch.Tensor) -> np.ndarray:
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
        total += _weights_at(layer, qi, kj).sum(-1)
    return (total / Q).float().numpy()


def _weights_at(layer: LayerScores, qi: torch.Tensor, kj: torch.Tensor) -> torch.Tensor:
    """(H, n) float64: the exact weight of query qi[m] on key kj[m] in every head (0 where
    masked)."""
    q, k = _tensor(layer.q, layer.dtype), _tensor(layer.k, layer.dtype)
    H_kv, group = k.size(0), q.size(0) // k.size(0)
    keys = k[:, kj].double().unsqueeze(1)  # (H_kv, 1, n, d): each key head once
    queries = q[:, qi].double().view(H_kv, group, len(qi), -1)
    s = (queries * keys).sum(-1).view(-1, len(qi)) * layer.scale  # (H, n)
    if layer.softcap is not None:
        s = layer.softcap * torch.tanh(s / layer.softcap)
    if layer.bias is not None:
        s = s + torch.from_numpy(layer.bias).double()[:, kj - qi + (layer.shape[1] - 1)]
    ok = layer.mask.allows(qi.numpy(), kj.numpy())
    w = (s - torch.from_numpy(layer.lse).double()[:, qi]).exp()
    return w if ok is None else w * torch.from_numpy(ok)
