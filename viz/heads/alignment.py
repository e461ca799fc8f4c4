"""Cross-attention alignment: which source position each produced target token looked at."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlens.record.picking import allowed_of, attention_of, check_head, check_layer
from attnlens.record.trace import Trace
from attnlens.viz.heads.heatmap import grid_layout, masked_layer, query_axis, weight_layer
from attnlens.viz.shared.labels import positions_axis
from attnlens.viz.shared.palette import ALIGNMENT


def cross_alignment(trace: Trace, layer: int | None = None, head: int | None = None) -> go.Figure:
    """Target × source (§3.2.3 encoder-decoder attention), heads averaged unless one is given.

    Row i is decoder position i, labelled with its input token and the token it produced.
    """
    weights = attention_of(trace, "cross")
    layer = weights.shape[0] - 1 if layer is None else layer
    check_layer(weights, layer)
    if head is not None:
        check_head(weights, head)
    w = weights[layer].mean(0) if head is None else weights[layer, head]  # (T, S)
    allowed = allowed_of(trace, "cross")
    cols = positions_axis(trace.src_tokens, trace.src_shown)
    rows, row_title = query_axis(trace, "cross")
    x, y = cols.values, rows.values
    layers = [weight_layer(w, allowed, x, y, ("target", "source"), ALIGNMENT)]
    if not allowed.all():
        layers.append(masked_layer(allowed, x, y))
    best = np.where(allowed, w, -np.inf).argmax(-1)  # (T,) the most attended source position
    layers.append(_best(best, x, y))
    which = "mean of heads" if head is None else f"head {head}"
    fig = go.Figure(layers)
    title = f"cross-attention alignment · layer {layer} · {which}"
    fig.update_layout(grid_layout(title, cols, rows, "source", row_title))
    return fig


def _best(best: np.ndarray, x: list[str], y: list[str]) -> go.Scatter:
    """A ring on the most attended source position of every target row."""
    return go.Scatter(
        x=[x[j] for j in best],
        y=y,
        mode="markers",
        marker={"symbol": "circle-open", "size": 10, "color": "crimson"},
        name="most attended",
        hoverinfo="skip",
    )
