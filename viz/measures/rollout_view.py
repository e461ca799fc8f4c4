"""The rollout and flow view: what analysis/rollout.py computes, drawn layer by layer."""

from __future__ import annotations

from typing import Literal

import numpy as np
import plotly.graph_objects as go

from attnlens.analysis.rollout import (
    FLOW_LIMIT,
    attention_flow,
    attention_rollout,
    head_means,
    reachable,
    rollout_of_means,
)
from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.heatmap import cell_gap, grid_layout, masked_layer
from attnlens.viz.shared.labels import positions_axis
from attnlens.viz.shared.palette import FLOW

Method = Literal["rollout", "flow"]
SCORES_POSITIONS = 512  # a record kept as scores: rollout drawn up to this many positions


def rollout_view(
    trace: Trace, kind: Kind, method: Method = "rollout", layer: int | None = None
) -> go.Figure:
    """Positions after a layer (rows) × input positions (columns), by rollout or by flow."""
    if kind == "cross":
        raise ValueError(
            "rollout and flow follow self-attention: pick encoder_self or decoder_self"
        )
    if method not in ("rollout", "flow"):
        raise ValueError(f"method must be 'rollout' or 'flow', got {method!r}")
    if getattr(trace, kind) is None and trace.scores and kind in trace.scores:  # a long input
        z = _rollout_from_scores(trace, kind, method, layer)
        layer = trace.model.shape(kind)[0] - 1 if layer is None else layer
    else:
        weights = attention_of(trace, kind)
        layer = weights.shape[0] - 1 if layer is None else layer
        check_layer(weights, layer)
        z = (
            attention_rollout(weights)[layer]
            if method == "rollout"
            else attention_flow(weights, layer)
        )
    axis = positions_axis(trace.tokens(kind)[0], trace.shown(kind)[0])
    labels = axis.values
    reach = reachable(allowed_of(trace, kind), layer + 1)
    fig = go.Figure(
        go.Heatmap(
            z=np.where(reach, z, np.nan).astype(np.float32),  # no path: a gap, not a low share
            x=labels,
            y=labels,
            zmin=0.0,
            colorscale=FLOW,
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


def _rollout_from_scores(trace: Trace, kind: Kind, method: Method, layer: int | None) -> np.ndarray:
    """Rollout of a record kept as scores, from each layer's head mean taken one head at a
    time; a ValueError past SCORES_POSITIONS (every position a row and a column: T² cells
    drawn) or for flow (layers × positions⁴)."""
    L = trace.model.shape(kind)[0]
    layer = L - 1 if layer is None else layer
    if not 0 <= layer < L:
        raise ValueError(f"layer {layer} is outside 0..{L - 1} ({L} layers)")
    T = len(trace.tokens(kind)[0])
    if method == "flow":
        if (layer + 1) * T**4 > FLOW_LIMIT:
            raise ValueError(
                f"attention flow over {layer + 1} layers × {T} positions is too slow "
                f"(layers × positions⁴ = {(layer + 1) * T**4} > {FLOW_LIMIT}); use rollout"
            )
        return attention_flow(attention_of(trace, kind), layer)  # a few positions: small
    if T > SCORES_POSITIONS:
        raise ValueError(
            f"rollout draws every position against every other: at most {SCORES_POSITIONS:,} "
            f"positions, and this input has {T:,}. The statistics and tags above cover it whole."
        )
    means: np.ndarray = rollout_of_means(head_means(trace, kind, layer + 1))[layer]
    return means
