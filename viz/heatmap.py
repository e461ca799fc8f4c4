"""The head heatmap: one layer, one head, one kind of attention, queries × keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlens.record.trace import Kind, Trace
from attnlens.viz.labels import position_labels
from attnlens.viz.picking import (
    KIND_TITLES,
    allowed_of,
    attention_of,
    check_head,
    check_layer,
    true_source_hits,
)

MASKED_COLOUR = "rgb(120,120,120)"
REFERENCE_COLOUR = "rgb(230,85,13)"


def head_heatmap(
    trace: Trace, kind: Kind, layer: int, head: int, reference: Sequence[int] | None = None
) -> go.Figure:
    """Query tokens on rows, key tokens on columns; masked cells grey, not a low weight.

    reference: for cross-attention, the true source position of each output token (query t
    predicts output token t), drawn as open circles; the title counts the rows whose largest
    weight is on it.
    """
    weights = attention_of(trace, kind)
    check_layer(weights, layer)
    check_head(weights, head)
    allowed = allowed_of(trace, kind)  # (Q, K)
    q_tokens, k_tokens = trace.tokens(kind)
    x, y = position_labels(k_tokens), position_labels(q_tokens)
    layers: list[go.Heatmap | go.Scatter] = [weight_layer(weights[layer, head], allowed, x, y)]
    if not allowed.all():  # only then: at 512 tokens an empty layer would cost 1.4 MB
        layers.append(masked_layer(allowed, x, y))
    found = ""
    if reference is not None:
        hits = reference_hits(trace, layer, head, reference)
        layers.append(reference_layer(reference, x, y))
        found = f"<br>argmax on the true source: {hits} of {len(reference)} output tokens"
    fig = go.Figure(layers)
    fig.update_layout(grid_layout(f"{KIND_TITLES[kind]} · layer {layer} · head {head}{found}"))
    return fig


def grid_layout(title: str, columns: str = "key", rows: str = "query") -> dict[str, Any]:
    """The layout every rows × columns grid of positions shares: column labels on top, the
    first row at the top, room above for rotated labels and a two-line title."""
    return {
        "title": {"text": title, "y": 0.97, "yanchor": "top"},
        "xaxis": {"title": columns, "type": "category", "side": "top"},
        "yaxis": {"title": rows, "type": "category", "autorange": "reversed"},
        "plot_bgcolor": "white",
        "margin": {"l": 10, "r": 10, "t": 120, "b": 10},
    }


def weight_layer(
    w: np.ndarray,
    allowed: np.ndarray,
    x: list[str],
    y: list[str],
    axes: tuple[str, str] = ("query", "key"),
    colorscale: str = "Blues",
) -> go.Heatmap:
    """The allowed cells, with the exact weight in the hover; masked cells left as gaps."""
    return go.Heatmap(
        z=np.where(allowed, w, np.nan).astype(np.float32),  # (rows, columns)
        x=x,
        y=y,
        zmin=0.0,
        zmax=1.0,
        colorscale=colorscale,
        colorbar={"title": "weight"},
        hovertemplate=f"{axes[0]} %{{y}}<br>{axes[1]} %{{x}}<br>weight %{{z:.7g}}<extra></extra>",
        xgap=1,
        ygap=1,
        hoverongaps=False,  # the layer beneath (or none) answers for its gaps
        name="weight",
    )


def masked_layer(allowed: np.ndarray, x: list[str], y: list[str]) -> go.Heatmap:
    """Masked cells drawn in grey on their own layer, so they never read as a low weight."""
    return go.Heatmap(
        z=np.where(allowed, np.nan, 1.0).astype(np.float32),  # (Q, K)
        x=x,
        y=y,
        colorscale=[[0.0, MASKED_COLOUR], [1.0, MASKED_COLOUR]],
        showscale=False,
        hovertemplate="query %{y}<br>key %{x}<br>masked: not allowed<extra></extra>",
        xgap=1,
        ygap=1,
        hoverongaps=False,  # the layer beneath (or none) answers for its gaps
        name="masked",
    )


def reference_hits(trace: Trace, layer: int, head: int, reference: Sequence[int]) -> int:
    """How many output tokens' cross-attention rows put their largest weight on the true
    source position (rows 0..len(reference)-1)."""
    weights = attention_of(trace, "cross")
    check_layer(weights, layer)
    check_head(weights, head)
    return int(true_source_hits(weights, reference)[layer, head])


def reference_layer(reference: Sequence[int], x: list[str], y: list[str]) -> go.Scatter:
    """Open circles on the cells of the true alignment."""
    return go.Scatter(
        x=[x[k] for k in reference],
        y=y[: len(reference)],
        mode="markers",
        marker={
            "symbol": "circle-open",
            "size": 14,
            "color": REFERENCE_COLOUR,
            "line": {"width": 2},
        },
        name="true source",
        hovertemplate="query %{y}<br>true source %{x}<extra></extra>",
        showlegend=False,
    )
