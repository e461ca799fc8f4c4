"""Attention rollout and attention flow (Abnar & Zuidema 2020) through self-attention layers:
how much each position draws on each input position, the residual stream counted."""

from __future__ import annotations

import numpy as np

from attnlens.analysis.flow import layered_max_flows

FLOW_LIMIT = 400_000  # layers × positions⁴, e.g. 6 × 16⁴: about 2 s for real attention


def residual_mixing(weights: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Heads averaged, the residual connection added as identity, rows renormalised: (L, T, T)."""
    T, K = weights.shape[2:]
    if T != K:
        raise ValueError(f"rollout needs self-attention (square), got {T} queries × {K} keys")
    mixed = (1 - residual) * weights.astype(np.float64).mean(1) + residual * np.eye(T)
    normalised: np.ndarray = mixed / mixed.sum(-1, keepdims=True)  # (L, T, T)
    return normalised


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
    mixing = residual_mixing(weights, residual)
    out = np.empty_like(mixing)
    acc = np.eye(mixing.shape[-1])
    for layer, m in enumerate(mixing):
        acc = m @ acc  # (T, T): outputs of this layer × inputs of layer 0
        out[layer] = acc
    return out


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
