"""Attention rollout and attention flow (Abnar & Zuidema 2020) through self-attention layers:
how much each position draws on each input position, the residual stream counted."""

from __future__ import annotations

import numpy as np

from attnlens.analysis.flow import layered_max_flows
from attnlens.record.trace import Kind, Trace

FLOW_LIMIT = 400_000  # layers × positions⁴, e.g. 6 × 16⁴: about 2 s for real attention


def residual_mixing(weights: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Heads averaged, the residual connection added as identity, rows renormalised: (L, T, T)."""
    return mixing_of_means(weights.astype(np.float64).mean(1), residual)


def mixing_of_means(means: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """residual_mixing of each layer's head mean (L, T, T), however the mean was taken."""
    T, K = means.shape[1:]
    if T != K:
        raise ValueError(f"rollout needs self-attention (square), got {T} queries × {K} keys")
    mixed = (1 - residual) * means + residual * np.eye(T)
    normalised: np.ndarray = mixed / mixed.sum(-1, keepdims=True)  # (L, T, T)
    return normalised


def head_means(trace: Trace, kind: Kind, layers: int) -> np.ndarray:
    """(layers, T, T) float64: the mean over heads of the first `layers` layers, one head's
    exact weights at a time (a record kept as scores never holds every head's T × T)."""
    first = trace.head(kind, 0, 0)
    heads = trace.model.shape(kind)[1]
    out = np.zeros((layers, *first.shape))
    for layer in range(layers):
        for h in range(heads):
            out[layer] += first if (layer, h) == (0, 0) else trace.head(kind, layer, h)
    out /= heads
    return out


def rollout_of_means(means: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """attention_rollout from each layer's head mean: (L, T, T)."""
    mixing = mixing_of_means(means, residual)
    out = np.empty_like(mixing)
    acc = np.eye(mixing.shape[-1])
    for layer, m in enumerate(mixing):
        acc = m @ acc  # (T, T): outputs of this layer × inputs of layer 0
        out[layer] = acc
    return out


def reachable(allowed: np.ndarray, n_layers: int) -> np.ndarray:
    """(T, T): which input positions (columns) can reach each position (rows) through
    n_layers of self-attention under the mask `allowed` (and the residual stream)."""
    if allowed.all():  # no mask (an encoder): every position, without the products
        return allowed
    step = (allowed | np.eye(len(allowed), dtype=bool)).astype(np.float32)
    reach = np.eye(len(allowed), dtype=np.float32)
    for _ in range(n_layers):
        reach = np.minimum(step @ reach, 1.0)
    return reach > 0


def attention_rollout(weights: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """How much each position after layer l draws on each input position: (L, T, T)."""
    return rollout_of_means(weights.astype(np.float64).mean(1), residual)


def attention_flow(
    weights: np.ndarray, layer: int | None = None, residual: float = 0.5
) -> np.ndarray:
    """Max flow from each input position to each position after `layer` (default last): (T, T)."""
    mixing = residual_mixing(weights, residual)
    L, T, _ = mixing.shape
    layer = L - 1 if layer is None else layer
    cost = (layer + 1) * T**4
    if cost > FLOW_LIMIT:
        raise ValueError(
            f"attention flow over {layer + 1} layers × {T} positions is too slow "
            f"(layers × positions⁴ = {cost} > {FLOW_LIMIT}); use rollout"
        )
    return layered_max_flows(mixing[: layer + 1])
