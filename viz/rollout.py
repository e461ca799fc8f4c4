"""Attention rollout and attention flow (Abnar & Zuidema 2020) through self-attention layers."""

from __future__ import annotations

from typing import Literal

import numpy as np
import plotly.graph_objects as go

from attnlens.record.trace import Kind, Trace
from attnlens.viz.flow import layered_max_flows
from attnlens.viz.heatmap import cell_gap, grid_layout, masked_layer
from attnlens.viz.labels import positions_axis
from attnlens.viz.picking import KIND_TITLES, allowed_of, attention_of, check_layer

Method = Literal["rollout", "flow"]
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


def rollout_view(
    trace: Trace, kind: Kind, method: Method = "rollout", layer: int | None = None
) -> go.Figure:
    """Positions after a layer (rows) × input positions (columns), by rollout or by flow."""
    if kind == "cross":
        raise ValueError(
            "rollout and flow follow self-attention: pick encoder_self or decoder_self"
        )
    weights = attention_of(trace, kind)
    layer = weights.shape[0] - 1 if layer is None else layer
    check_layer(weights, layer)
    if method == "rollout":
        z = attention_rollout(weights)[layer]
    elif method == "flow":
        z = attention_flow(weights, layer)
    else:
        raise ValueError(f"method must be 'rollout' or 'flow', got {method!r}")
    axis = positions_axis(trace.tokens(kind)[0], trace.shown(kind)[0])
    labels = axis.values
    reach = reachable(allowed_of(trace, kind), layer + 1)
    fig = go.Figure(
        go.Heatmap(
            z=np.where(reach, z, np.nan).astype(np.float32),  # no path: a gap, not a low share
            x=labels,
            y=labels,
            zmin=0.0,
            colorscale="Purples",
            colorbar={"title": {"text": method}},
            hovertemplate=f"after layer {layer}: %{{y}}<br>input %{{x}}<br>{method} %{{z:.5f}}"
            "<extra></extra>",
            xgap=cell_gap(len(labels)),
            ygap=cell_gap(len(labels)),
        )
    )
    if not reach.all():  # a causal mask: the future, grey as on the heatmaps (white on dark)
        fig.add_trace(masked_layer(reach, labels, labels))
    title = f"attention {method} · {KIND_TITLES[kind]} · layers 0–{layer}"
    fig.update_layout(
        grid_layout(title, axis, axis, "input position", f"position after layer {layer}")
    )
    return fig
