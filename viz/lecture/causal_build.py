"""The causal mask of §3.2.3 built up one token at a time, beside what the head did with it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.picking import allowed_of, attention_of, check_head, check_layer
from attnlens.record.trace import Trace
from attnlens.viz.lecture.panels import mask_panel, weights_panel
from attnlens.viz.shared.labels import position_labels, token_text
from attnlens.viz.shared.outline import outline_row


def causal_build(trace: Trace, layer: int, head: int, step: int) -> go.Figure:
    """Decoder self-attention after `step` + 1 tokens: left, the mask rows so far (allowed light,
    future dark, rows not yet written empty); right, the head's weights on those rows. The row
    of token `step` is outlined: it may look at positions 0..step and nothing after."""
    weights = attention_of(trace, "decoder_self")
    check_layer(weights, layer)
    check_head(weights, head)
    allowed = allowed_of(trace, "decoder_self")  # (T, T)
    T = allowed.shape[0]
    if not 0 <= step < T:
        raise ValueError(f"step {step} is outside 0..{T - 1} ({T} decoder positions)")
    tokens = trace.shown("decoder_self")[0]
    labels = position_labels(tokens)
    written = np.arange(T)[:, None] <= step  # (T, 1): rows that exist after this step
    mask_z = np.where(written, allowed.astype(np.float32), np.nan)  # (T, T)
    weight_z = np.where(written & allowed, weights[layer, head], np.nan).astype(np.float32)
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.06,
        subplot_titles=(
            "the mask so far (dark: the future, −∞)",
            f"layer {layer} · head {head}: the weights",
        ),
    )
    fig.add_trace(mask_panel(mask_z, labels, labels, "mask", (2, 2)), row=1, col=1)
    fig.add_trace(weights_panel(weight_z, labels, labels, gap=2, printed=True), row=1, col=2)
    for col in (1, 2):
        outline_row(fig, step, T, col)
    fig.update_xaxes(type="category", side="bottom", tickangle=-45, range=[-0.5, T - 0.5])
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_layout(
        title=f"token {step} ({token_text(tokens[step])}) may look at positions 0–{step}; "
        f"{T - 1 - step} later position{'s' if T - 1 - step != 1 else ''} masked",
        margin={"l": 10, "r": 10, "t": 120, "b": 10},
    )
    return fig
