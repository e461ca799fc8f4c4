"""Maximum flow through a capacity matrix (Edmonds–Karp), for attention flow across layers."""

from __future__ import annotations

import numpy as np

EPS = 1e-9  # residual capacity below this counts as saturated


def max_flow(capacity: np.ndarray, source: int, sink: int) -> float:
    """The largest flow from source to sink; capacity[u, v] bounds the flow u → v: (V, V)."""
    residual = np.array(capacity, dtype=np.float64)  # (V, V)
    total = 0.0
    while (parent := _shortest_path(residual, source, sink)) is not None:
        us, vs = [], []
        v = sink
        while v != source:
            us.append(int(parent[v]))
            vs.append(v)
            v = int(parent[v])
        bottleneck = residual[us, vs].min()
        residual[us, vs] -= bottleneck
        residual[vs, us] += bottleneck
        total += float(bottleneck)
    return total


def _shortest_path(residual: np.ndarray, source: int, sink: int) -> np.ndarray | None:
    """Breadth-first parents (V,) of a fewest-edge path with room left, or None."""
    parent = np.full(residual.shape[0], -1)
    parent[source] = source
    frontier = np.array([source])
    while frontier.size:
        reach = residual[frontier] > EPS  # (F, V)
        fresh = np.nonzero(reach.any(0) & (parent < 0))[0]
        parent[fresh] = frontier[reach[:, fresh].argmax(0)]
        if parent[sink] >= 0:
            return parent
        frontier = fresh
    return None


def layered_capacity(mixing: np.ndarray) -> np.ndarray:
    """The graph of positions per layer: node l·T + k feeds node (l+1)·T + q with mixing[l, q, k].

    mixing: (L, T, T) row-stochastic; returns ((L+1)·T, (L+1)·T).
    """
    L, T, _ = mixing.shape
    cap = np.zeros(((L + 1) * T, (L + 1) * T))
    for layer in range(L):
        lo, hi = layer * T, (layer + 1) * T
        cap[lo:hi, hi : hi + T] = mixing[layer].T  # (k, q): input k flows to query q
    return cap
