"""The rollout and flow view: what analysis/rollout.py computes, drawn layer by layer."""

from __future__ import annotations

from typing import Literal

import numpy as np
import plotly.graph_objects as go

from attnlens.analysis.rollout import attention_flow, attention_rollout, reachable
from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heatmap import cell_gap, grid_layout, masked_layer
from attnlens.viz.labels import positions_axis

Method = Literal["rollout", "flow"]


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
