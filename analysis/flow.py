"""Maximum flow (Edmonds–Karp), and flows through a stack of attention layers."""

from __future__ import annotations

import numpy as np

EPS = 1e-9  # residual capacity below this counts as saturated


def max_flow(capacity: np.ndarray, source: int, sink: int) -> float:
    """The largest flow from source to sink; capacity[u, v] bounds the flow u → v: (V, V)."""
    return augment(np.array(capacity, dtype=np.float64), source, sink)


def augment(residual: np.ndarray, source: int, sink: int) -> float:
    """Push flow along shortest paths with room left until none is left; updates `residual`."""
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


def layered_max_flows(mixing: np.ndarray) -> np.ndarray:
    """Max flow from every input position k to every top position q: (T, T) indexed [q, k].

    Exact: widest forward paths first, all pairs at once (cheap, vectorised), then
    Edmonds–Karp on each pair's residual graph finishes what needs a flow to be rerouted.
    """
    L, T, _ = mixing.shape
    forward, flows = _widest_paths_first(mixing)  # (T*T, L, T, T), (T*T,)
    cap = layered_capacity(mixing)
    for b in range(T * T):
        q, k = divmod(b, T)
        residual = _residual(cap, forward[b], L, T)
        flows[b] += augment(residual, k, L * T + q)
    return flows.reshape(T, T)


def _widest_paths_first(mixing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair b = q·T + k: send flow along the widest forward path until none is left.

    Returns the forward room left per layer, (B, L, T_in, T_out), and the flow sent, (B,).
    """
    L, T, _ = mixing.shape
    B = T * T
    q_of, k_of = np.divmod(np.arange(B), T)
    room = np.broadcast_to(mixing.transpose(0, 2, 1), (B, L, T, T)).copy()  # (B, L, in, out)
    sent = np.zeros(B)
    active = np.arange(B)
    while active.size:
        n = np.arange(active.size)
        width = np.zeros((active.size, T))
        width[n, k_of[active]] = np.inf
        choice = np.empty((L, active.size, T), dtype=int)
        for layer in range(L):
            via = np.minimum(width[:, :, None], room[active, layer])  # (n, in, out)
            choice[layer], width = via.argmax(1), via.max(1)
        w = width[n, q_of[active]]  # (n,) bottleneck of each widest path
        go = w > EPS
        active, n, w, choice = active[go], n[: go.sum()], w[go], choice[:, go]
        out = q_of[active]
        for layer in range(L - 1, -1, -1):
            into = choice[layer, n, out]
            room[active, layer, into, out] -= w
            out = into
        sent[active] += w
    return room, sent


def _residual(cap: np.ndarray, room: np.ndarray, L: int, T: int) -> np.ndarray:
    """The residual graph once `cap - room` flows forward through each layer: (V, V)."""
    residual = np.zeros_like(cap)
    for layer in range(L):
        lo, hi = layer * T, (layer + 1) * T
        residual[lo:hi, hi : hi + T] = room[layer]
        residual[hi : hi + T, lo:hi] = (cap[lo:hi, hi : hi + T] - room[layer]).T
    return residual
