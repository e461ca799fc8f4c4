"""Multi-head attention (§3.2.2): the same sentence through each head of one layer, side by side."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.lecture.panels import weights_panel
from attnlens.viz.shared.labels import position_labels

MAX_HEADS = 16  # one row of panels; wider models are shown a slice at a time


def heads_row(trace: Trace, kind: Kind, layer: int, first_head: int = 0) -> go.Figure:
    """Every head of one layer (up to MAX_HEADS from first_head) on the same queries and keys,
    one panel each, sharing one colour scale: where they differ is what each head learned."""
    weights = attention_of(trace, kind)
    check_layer(weights, layer)
    H = weights.shape[1]
    if not 0 <= first_head < H:
        raise ValueError(f"head {first_head} is outside 0..{H - 1} ({H} heads)")
    heads = list(range(first_head, min(H, first_head + MAX_HEADS)))
    allowed = allowed_of(trace, kind)
    q_tokens, k_tokens = trace.shown(kind)
    x, y = position_labels(k_tokens), position_labels(q_tokens)
    fig = make_subplots(
        rows=1,
        cols=len(heads),
        shared_yaxes=True,
        horizontal_spacing=0.015,
        subplot_titles=[f"head {h}" for h in heads],
    )
    for col, h in enumerate(heads, start=1):
        z = np.where(allowed, weights[layer, h], np.nan).astype(np.float32)  # (Q, K)
        panel = weights_panel(z, x, y, f"head {h}", showscale=col == len(heads))
        fig.add_trace(panel, row=1, col=col)
    # upright key labels: slanted, a panel's last ran under the next panel's first (lm at 1400 px)
    fig.update_xaxes(type="category", side="bottom", tickangle=-90, showticklabels=len(x) <= 24)
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=False)
    # the queries are named once, left of the first panel: a shared axis's labels drawn for
    # every panel sit in the gap between panels, over the previous head's cells
    fig.update_yaxes(showticklabels=len(y) <= 40, row=1, col=1)
    shown = "" if len(heads) == H else f" (heads {heads[0]}–{heads[-1]} of {H})"
    fig.update_layout(
        title=f"{KIND_TITLES[kind]}, layer {layer}: {H} heads, one input{shown}",
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
    )
    return fig
