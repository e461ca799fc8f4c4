"""Is attention an explanation? drawn: for one output token, each input's erasure importance
beside raw attention, rollout and flow; and Spearman's ρ per layer, held-out and this input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.analysis.agreement import METHODS, importance, layers_of
from attnlens.record.erasure import ErasureCase
from attnlens.viz.shared.labels import position_labels, token_text
from attnlens.viz.shared.palette import BLUE, GREEN, NEUTRAL, RED

NAMES = {"raw": "raw attention", "rollout": "rollout", "flow": "flow"}
COLOURS = {"raw": BLUE, "rollout": GREEN, "flow": RED}


def _scaled(values: np.ndarray) -> np.ndarray:
    """values ÷ their largest magnitude over the erasable inputs (so all share one axis)."""
    top = np.nanmax(np.abs(values)) if np.isfinite(values).any() else 0.0
    return values / top if top > 0 else values


def explanation_view(case: ErasureCase, table: pd.DataFrame, layer: int | None = None) -> go.Figure:
    """Left: per input token, erasure and the three attention-based importances after `layer`
    (default the last), each scaled to its largest value. Right: ρ per layer and method,
    held-out mean ± std as lines, this input as open markers."""
    layer = layers_of(case) - 1 if layer is None else layer
    if not 0 <= layer < layers_of(case):
        raise ValueError(f"layer {layer} is outside 0..{layers_of(case) - 1}")
    fig = make_subplots(
        1,
        2,
        column_widths=[0.62, 0.38],
        subplot_titles=[
            f"what {token_text(case.output_token)!s} draws on (after layer {layer})",
            "Spearman ρ with erasure",
        ],
    )
    for trace in importance_traces(case, layer):
        fig.add_trace(trace, 1, 1)
    for trace in correlation_traces(table):
        fig.add_trace(trace, 1, 2)
    fig.update_yaxes(title="share of the largest", row=1, col=1)
    fig.update_xaxes(type="category", tickangle=-60, row=1, col=1)
    fig.update_xaxes(title="layer", dtick=1, row=1, col=2)
    fig.update_yaxes(range=[-1.05, 1.05], row=1, col=2)
    fig.update_layout(
        title={
            "text": f"is attention an explanation? · output {token_text(case.output_token)} "
            f"(log p {case.logprob:.2f})<br><sup>right: held-out mean ± std as lines, this "
            "input as circles</sup>",
            "y": 0.97,
            "yanchor": "top",
        },
        margin={"t": 110},
    )
    return fig


def importance_traces(case: ErasureCase, layer: int) -> list[go.Bar | go.Scatter]:
    """The left panel: erasure as bars, raw attention, rollout and flow as lines, over the
    erasable inputs, each scaled to its largest value."""
    keep = case.erasable
    labels = [lab for lab, k in zip(position_labels(case.input_tokens), keep, strict=True) if k]
    bars = go.Bar(x=labels, y=_scaled(case.erasure[keep]), name="erasure",
                  marker={"color": NEUTRAL})  # fmt: skip
    return [bars] + [
        go.Scatter(
            x=labels,
            y=_scaled(importance(case, method, layer)[keep]),
            mode="lines+markers",
            name=NAMES[method],
            legendgroup=method,
            line={"color": COLOURS[method]},
        )
        for method in METHODS
    ]


def correlation_traces(table: pd.DataFrame) -> list[go.Scatter]:
    """The right panel: each method's ρ per layer, held-out mean ± std as a line where the
    table has it, this input as open circles."""
    traces = []
    for method in METHODS:
        rows = table[table["method"] == method].sort_values("layer")
        colour = COLOURS[method]
        if "mean" in rows and rows["mean"].notna().any():
            traces.append(
                go.Scatter(
                    x=rows["layer"],
                    y=rows["mean"],
                    mode="lines+markers",
                    error_y={"array": rows["std"]},
                    legendgroup=method,
                    name=f"{NAMES[method]}, held-out",
                    showlegend=False,
                    line={"color": colour},
                )
            )
        if "this_input" in rows:
            traces.append(
                go.Scatter(
                    x=rows["layer"],
                    y=rows["this_input"],
                    mode="markers",
                    marker={"symbol": "circle-open", "size": 12, "color": colour},
                    legendgroup=method,
                    showlegend=False,
                    name=f"{NAMES[method]}, this input",
                )
            )
    return traces
