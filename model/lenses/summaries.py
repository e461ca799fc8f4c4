"""Every head's overview and statistics at trace time, from its exact weights (record/summary.py's
Summary), and each row's log-sum-exp made exact to float64 on the way (model/lenses/pooling.py).

The layers are pooled side by side, one per thread, each thread's torch on one thread of its
own: a tile's dozen operations then run where they are called, with no parallel region to
share and wait on (two torch threads over each small operation cost 5-20 times the CPU of one
on a busy machine). The statistics that read one key per query (the first key, the query's own,
the one before it, the induction key, end tokens) are computed alone, O(T) a head, in float64.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import torch

from attnlens.model.lenses.pooling import OVERVIEW as OVERVIEW  # the side read at trace time
from attnlens.model.lenses.pooling import Pooled, Scoring, pool
from attnlens.record.scores import LayerScores
from attnlens.record.summary import Summary, edges

POINTS = ("previous", "first", "induction", "own", "end")
SHARES = ("special", "first_norm", "special_norm")  # analysis/norm_shares.py's, per head
PAIRS_AT_ONCE = 1 << 16  # (query, end key) pairs weighed at once: H × this floats


def summarise(
    layers: Sequence[LayerScores],
    matches: Sequence[tuple[int, int]],
    ends: Sequence[int] = (),
    device: torch.device | None = None,
    carried: np.ndarray | None = None,
    specials: Sequence[int] = (),
) -> tuple[Summary, tuple[LayerScores, ...]]:
    """The Summary of one kind, and its layers with each row's log-sum-exp exact to float64;
    matches: (query, key) pairs of the induction statistic; ends and specials: the positions
    of end tokens and of special tokens among the keys; device: where the layers are pooled
    (the model's; the CPU by default); carried: the kind's ‖f_h(xⱼ)‖ (L, H, K), whose
    norm-weighted overviews and norm shares are kept beside the weights' (None: the record has
    no norms, and neither). Each layer's numbers go straight into the record's arrays (float16
    overviews)."""
    L, (H, Q, K) = len(layers), layers[0].shape
    if carried is not None and carried.shape != (L, H, K):
        raise ValueError(f"carried is {carried.shape}, the layers' keys {(L, H, K)}")
    rows, cols = edges(Q, OVERVIEW), edges(K, OVERVIEW)
    blocks = (L, H, len(rows) - 1, len(cols) - 1)
    most, mean = np.empty(blocks, np.float16), np.empty(blocks, np.float16)
    normed = None if carried is None else np.empty((2, *blocks), np.float16)  # mean, max
    stats: dict[str, list[np.ndarray]] = {"entropy": [], "distance": []}
    exact, totals = [], []
    norms = [None] * L if carried is None else list(carried)
    pooled_layers = _pooled_all(layers, norms, device or torch.device("cpu"), OVERVIEW)
    for i, (layer, pooled) in enumerate(zip(layers, pooled_layers, strict=True)):
        most[i], mean[i] = pooled.max, pooled.mean  # straight into the record's arrays
        if normed is not None:
            _as_half(normed[0, i], pooled.norm_mean)
            _as_half(normed[1, i], pooled.norm_max)
        stats["entropy"].append(pooled.entropy)
        stats["distance"].append(pooled.distance)
        exact.append(replace(layer, lse=pooled.lse))
        totals.append(pooled.norm_total)
    pairs = torch.tensor(list(matches), dtype=torch.long).reshape(-1, 2)  # (M, 2)
    at = {"ends": _positions(ends), "specials": _positions(specials)}
    points = [_points(*where, pairs, at) for where in zip(exact, norms, totals, strict=True)]
    shares = {name: np.stack([row[name] for row in points]) for name in SHARES}
    return Summary(
        overview_max=most,
        overview_mean=mean,
        row_edges=rows,
        col_edges=cols,
        **{name: np.stack(values) for name, values in stats.items()},
        **{name: np.stack([row[name] for row in points]) for name in POINTS},
        overview_norm_mean=None if normed is None else normed[0],
        overview_norm_max=None if normed is None else normed[1],
        special=shares["special"],
        first_norm=None if carried is None else shares["first_norm"],
        special_norm=None if carried is None else shares["special_norm"],
    ), tuple(exact)


def _as_half(out: np.ndarray, a: np.ndarray | None) -> None:
    """A float32 array cast into the float16 array out, through torch (numpy's cast took five
    times as long) and with nothing between."""
    assert a is not None, "pooled without the keys' norms"
    torch.from_numpy(out).copy_(torch.from_numpy(a))


def _positions(keys: Sequence[int]) -> torch.Tensor:
    return torch.tensor(sorted(set(keys)), dtype=torch.long)


def _pooled_all(
    layers: Sequence[LayerScores],
    carried: Sequence[np.ndarray | None],
    device: torch.device,
    side: int,
) -> Iterator[Pooled]:
    """Each layer pooled (with its keys' norms where given), in order; on the CPU side by side
    in as many threads as torch has, torch on one thread in each meanwhile (one thread: here,
    in this one)."""
    threads = torch.get_num_threads()
    pooled = functools.partial(_pooled, device=device, side=side)
    if device.type != "cpu" or threads == 1 or len(layers) == 1:
        yield from map(pooled, layers, carried)
        return
    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(threads, thread_name_prefix="attnlens-summary") as workers:
            yield from workers.map(pooled, layers, carried)
    finally:
        torch.set_num_threads(threads)


def exact(layer: LayerScores) -> LayerScores:
    """One layer with each row's log-sum-exp exact to float64, as a trace keeps it (the
    kernel's float32 one is off by |lse| · 2⁻²⁴ on a sharp head)."""
    return replace(layer, lse=_pooled(layer, device=torch.device("cpu"), side=OVERVIEW).lse)


def _pooled(
    layer: LayerScores, carried: np.ndarray | None = None, *, device: torch.device, side: int
) -> Pooled:
    bias = None if layer.bias is None else torch.from_numpy(layer.bias).to(device)
    scoring = Scoring(layer.scale, layer.mask, layer.softcap, bias)
    q, k = (kept_tensor(a, layer.dtype).to(device) for a in (layer.q, layer.k))
    norms = None if carried is None else torch.from_numpy(carried)
    return pool(q, k, torch.from_numpy(layer.lse).to(device), scoring, side, norms)


def kept_tensor(a: np.ndarray, dtype: str) -> torch.Tensor:
    """A kept array as a tensor of the dtype the kernel read (bfloat16 from its 16-bit words),
    sharing its memory."""
    t = torch.from_numpy(a)
    return t.view(torch.bfloat16) if dtype == "bfloat16" else t


@torch.inference_mode()
def _points(
    layer: LayerScores,
    carried: np.ndarray | None,
    total: np.ndarray | None,
    pairs: torch.Tensor,
    at: dict[str, torch.Tensor],
) -> dict[str, np.ndarray]:
    """The statistics that read one key per query: the first key, the query's own position,
    the key just before it (each a diagonal of q · k, no gather), the induction key, end
    tokens (at["ends"]) and the norm shares of the first key and the special tokens
    (at["specials"], with the keys' norms carried (H, K) and total (H,), Σᵢⱼ αᵢⱼ ‖f(xⱼ)‖);
    each weight computed alone, its mean in float64."""
    H, Q, K = layer.shape
    q, k = kept_tensor(layer.q, layer.dtype).float(), kept_tensor(layer.k, layer.dtype).float()
    q = q.view(k.size(0), H // k.size(0), Q, -1)  # (H_kv, G, Q, d)
    lse = torch.from_numpy(layer.lse)
    offset = layer.mask.offset
    first = (q @ k[:, 0, :, None].unsqueeze(1)).view(H, Q)  # (H_kv, G, Q, 1)
    out: dict[str, np.ndarray | torch.Tensor] = {"first": _mean(layer, first, lse, 0, None)}
    for name, shift in (("own", 0), ("previous", -1)):
        lo, hi = max(0, -(offset + shift)), min(Q, K - offset - shift)  # rows whose key exists
        if hi <= lo:
            out[name] = np.full(H, np.nan, dtype=np.float32)
            continue
        keys = k[:, lo + offset + shift : hi + offset + shift].unsqueeze(1)  # (H_kv, 1, n, d)
        dots = (q[:, :, lo:hi] * keys).sum(-1).view(H, -1)  # (H, n)
        out[name] = _mean(layer, dots, lse, lo, lo + offset + shift)
    out["induction"] = _gathered(layer, q, k, lse, pairs[:, 0], pairs[:, 1]).mean(-1)
    out["end"] = _end(layer, q, k, lse, at["ends"])
    out |= _carried_shares(layer, q, k, lse, at["specials"], carried, total)
    return {name: np.asarray(v, dtype=np.float32) for name, v in out.items()}


def _carried_shares(
    layer: LayerScores,
    q: torch.Tensor,
    k: torch.Tensor,
    lse: torch.Tensor,
    specials: torch.Tensor,
    carried: np.ndarray | None,
    total: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """(H,) each, as analysis/norm_shares.py defines them from column sums rⱼ = Σᵢ αᵢⱼ: the
    special tokens' weight share Σ_S rⱼ / Q, and (with norms) the first key's and the special
    tokens' norm shares Σ_S rⱼ ‖f(xⱼ)‖ / Σⱼ rⱼ ‖f(xⱼ)‖ (NaN without special tokens, 0 where
    the head carries nothing). Only the columns of those keys are weighed: O(Q) each."""
    H, Q, _ = layer.shape
    keys = torch.cat([torch.zeros(1, dtype=torch.long), specials])
    received = _columns(layer, q, k, lse, keys)  # (H, 1 + S) float64
    nan = np.full(H, np.nan)
    out = {"special": received[:, 1:].sum(-1) / Q if len(specials) else nan}
    out |= {"first_norm": nan, "special_norm": nan}
    if carried is None or total is None:
        return out
    given = received * carried[:, keys.numpy()].astype(np.float64)  # (H, 1 + S)
    zero = np.zeros(H)
    out["first_norm"] = np.divide(given[:, 0], total, out=zero.copy(), where=total > 0)
    if len(specials):
        out["special_norm"] = np.divide(given[:, 1:].sum(-1), total, out=zero, where=total > 0)
    return out


def _columns(
    layer: LayerScores, q: torch.Tensor, k: torch.Tensor, lse: torch.Tensor, keys: torch.Tensor
) -> np.ndarray:
    """(H, n) float64: Σᵢ αᵢⱼ over every query of each key j in keys, PAIRS_AT_ONCE pairs at
    a time."""
    H, Q, _ = layer.shape
    total = torch.zeros(H, len(keys), dtype=torch.float64)
    step = max(1, PAIRS_AT_ONCE // len(keys))
    for r0 in range(0, Q, step):
        qi = torch.arange(r0, min(Q, r0 + step)).repeat_interleave(len(keys))
        kj = keys.repeat(len(qi) // len(keys))
        total += _gathered(layer, q, k, lse, qi, kj).view(H, -1, len(keys)).sum(1)
    return total.numpy()


def _mean(
    layer: LayerScores, dots: torch.Tensor, lse: torch.Tensor, row: int, key: int | None
) -> np.ndarray:
    """(H,): the mean weight of the pairs (row + m, key + m), or (row + m, 0) for key None,
    whose q · k are dots (H, n)."""
    n = dots.size(1)
    rows = torch.arange(row, row + n)
    keys = torch.zeros(n, dtype=torch.long) if key is None else torch.arange(key, key + n)
    return _weights(layer, dots, lse, rows, keys).mean(-1).numpy()


def _weights(
    layer: LayerScores, dots: torch.Tensor, lse: torch.Tensor, qi: torch.Tensor, kj: torch.Tensor
) -> torch.Tensor:
    """(H, n) float64: exp(score − lse) of query qi[m] and key kj[m] given their q · k (0
    where masked)."""
    s = dots.double() * layer.scale
    if layer.softcap is not None:
        s = layer.softcap * torch.tanh(s / layer.softcap)
    if layer.bias is not None:
        s = s + torch.from_numpy(layer.bias).double()[:, kj - qi + (layer.shape[1] - 1)]
    w = (s - lse[:, qi]).exp()
    ok = layer.mask.allows(qi.numpy(), kj.numpy())
    return w if ok is None else w * torch.from_numpy(ok)


def _gathered(
    layer: LayerScores,
    q: torch.Tensor,
    k: torch.Tensor,
    lse: torch.Tensor,
    qi: torch.Tensor,
    kj: torch.Tensor,
) -> torch.Tensor:
    """(H, n) float64: the weights of arbitrary (query, key) pairs (NaN means without any)."""
    if not len(qi):
        return torch.full((layer.n_heads, 1), torch.nan, dtype=torch.float64)
    dots = (q[:, :, qi] * k[:, kj].unsqueeze(1)).sum(-1)  # (H_kv, G, n)
    return _weights(layer, dots.view(layer.n_heads, -1), lse, qi, kj)


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
        total += _gathered(layer, q, k, lse, qi, kj).sum(-1)
    return (total / Q).numpy()
