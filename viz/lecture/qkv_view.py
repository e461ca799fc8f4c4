"""Scaled dot-product attention (§3.2.1) on one head's own Q, K and V, as one picture."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.viz.lecture.panels import weights_panel
from attnlens.viz.lecture.sdpa_steps import attention_steps
from attnlens.viz.shared.labels import position_labels
from attnlens.viz.shared.outline import outline_row
from attnlens.viz.shared.palette import MASKED, SIGNED

PRINTED_UP_TO = 12  # keys and queries whose weights are printed in their cells: past that a
# cell is too small on a slide for "0.37" to be read (the hover still gives each weight)


def qkv_view(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    mask: np.ndarray | None = None,
    query: int | None = None,
) -> go.Figure:
    """Q (T_q, d_k), K and V (T_k, d_k) as heatmaps, then softmax(QKᵀ/√d_k) computed from them
    (T_q, T_k), masked cells grey; `query` outlines one query's row in Q and in the weights."""
    steps = attention_steps(q, k, v, mask)
    rows, keys = position_labels(q_tokens), position_labels(k_tokens)
    dims = [str(j) for j in range(steps.d_k)]
    fig = make_subplots(
        rows=1,
        cols=4,
        column_widths=[0.2, 0.2, 0.2, 0.4],
        horizontal_spacing=0.05,
        subplot_titles=("Q (queries)", "K (keys)", "V (values)", f"softmax(QKᵀ / √{steps.d_k})"),
    )
    for col, (m, y) in enumerate(((q, rows), (k, keys), (v, keys)), start=1):
        fig.add_trace(_matrix(np.asarray(m, np.float64), dims, y, col == 1), row=1, col=col)
    printed = max(len(rows), len(keys)) <= PRINTED_UP_TO
    weights = np.asarray(steps.weights, np.float64)
    fig.add_trace(weights_panel(weights, keys, rows, printed=printed), row=1, col=4)
    allowed = np.ones_like(steps.weights, bool) if mask is None else np.asarray(mask, bool)
    if not allowed.all():
        blocked = np.where(allowed, np.nan, 1.0)
        fig.add_trace(
            go.Heatmap(
                z=blocked,
                x=keys,
                y=rows,
                showscale=False,
                hoverinfo="skip",
                colorscale=[[0, MASKED], [1, MASKED]],
                xgap=1,
                ygap=1,
                name="masked",
            ),
            row=1,
            col=4,
        )
    if query is not None:
        if not 0 <= query < len(rows):
            raise ValueError(f"query {query} is outside 0..{len(rows) - 1}")
        for col, width in ((1, len(dims)), (4, len(keys))):
            outline_row(fig, query, width, col)
    fig.update_xaxes(type="category", side="bottom", showticklabels=False, row=1)
    fig.update_xaxes(showticklabels=True, col=4)
    fig.update_yaxes(type="category", autorange="reversed")
    for col in (2, 3, 4):  # rows named once, left of Q: the weights' own names fell on V
        fig.update_yaxes(showticklabels=False, ticks="", col=col)
    fig.update_layout(
        title=f"§3.2.1 on this input: d_k = {steps.d_k}, each row of K is a key"
        + ("" if printed else f"<br>(weights printed up to {PRINTED_UP_TO} tokens: hover a cell)"),
        margin={"l": 10, "r": 10, "t": 110, "b": 10},
    )
    return fig


def _matrix(m: np.ndarray, dims: list[str], y: list[str], first: bool) -> go.Heatmap:
    """One of Q, K, V: positions down, the d_k dimensions across, red-blue around 0."""
    bound = float(np.abs(m).max()) or 1.0
    return go.Heatmap(
        z=m,
        x=dims,
        y=y,
        colorscale=SIGNED,
        zmin=-bound,
        zmax=bound,
        showscale=False,
        xgap=1,
        ygap=1,
        hovertemplate="%{y}<br>dimension %{x}<br>%{z:.3f}<extra></extra>",
        name="Q" if first else "K/V",
    )
