"""Heads against the known truth drawn: each cross head's alignment accuracy by layer, and
beside it alignment against importance (are the aligned heads the important ones?)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from attnlens.record.experiment import ExperimentResult

NEAR = (1 / 12, 1 / 20)  # a label's width and height, as shares of a panel's x and y span


def shared_labels(xs: ArrayLike, ys: ArrayLike, names: Sequence[str]) -> list[str]:
    """One label per group of points nearer each other than a label's size (NEAR: translate's
    heads 1.2 and 1.3, 3 points apart on alignment, printed "1.3" over "1.2"): the group is
    named once, on its first head ("1.0, 1.1, 1.2, 1.3"), its other heads left blank."""
    if not len(names):
        return []

    def spread(values: ArrayLike) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        return np.asarray((v - v.min()) / (float(np.ptp(v)) or 1.0), dtype=float)

    x, y = spread(xs), spread(ys)
    groups: list[list[int]] = []
    for i in sorted(range(len(names)), key=lambda i: (x[i], y[i])):
        for group in groups:  # each group is as large as one label around its first point
            first = group[0]
            if abs(x[i] - x[first]) < NEAR[0] and abs(y[i] - y[first]) < NEAR[1]:
                group.append(i)
                break
        else:
            groups.append([i])
    labels = [""] * len(names)
    for group in groups:
        members = sorted(group)
        labels[members[0]] = ", ".join(names[i] for i in members)
    return labels


def alignment_chart(result: ExperimentResult) -> go.Figure:
    """Left: alignment accuracy of every cross-attention head against its layer. Right: the
    same heads by alignment and importance (log-likelihood lost when ablated alone)."""
    h = result.heads
    names = [f"{layer}.{head}" for layer, head in zip(h["layer"], h["head"], strict=True)]
    rho = result.summary.get("spearman_alignment_importance")
    shown = "n/a" if rho is None else f"{rho:.2f}"
    fig = make_subplots(
        1, 2, subplot_titles=["which layers align?", f"aligned vs important (Spearman ρ = {shown})"]
    )
    fig.add_trace(
        go.Scatter(
            x=h["layer"],
            y=h["aligned"],
            mode="markers+text",
            text=shared_labels(h["layer"], h["aligned"], names),
            customdata=names,
            textposition="middle right",
            marker={"size": 11},
            cliponaxis=False,  # a label above the top point stays whole (1.1 on translate)
            name="cross head",
            hovertemplate="head %{customdata}<br>aligned %{y:.1%}<extra></extra>",
        ),
        1,
        1,
    )
    fig.add_trace(
        go.Scatter(
            x=h["aligned"],
            y=h["importance"],
            mode="markers+text",
            text=shared_labels(h["aligned"], h["importance"], names),
            customdata=names,
            textposition="top center",
            marker={"size": 11},
            cliponaxis=False,  # a label above the top point stays whole (1.1 on translate)
            showlegend=False,
            hovertemplate="head %{customdata}<br>aligned %{x:.1%}<br>importance %{y:.4f}"
            "<extra></extra>",
        ),
        1,
        2,
    )
    fig.add_hline(y=0.8, line={"dash": "dash", "color": "grey"}, layer="below", row=1, col=1)
    layers = int(h["layer"].max()) + 1 if len(h) else 1
    fig.update_xaxes(title="decoder layer", dtick=1, range=[-0.4, layers - 0.3], row=1, col=1)
    fig.update_yaxes(title="alignment accuracy", tickformat=".0%", range=[0, 1.05], row=1, col=1)
    fig.update_xaxes(  # room past 100% for the label of heads that all align
        title="alignment accuracy", tickformat=".0%", range=[-0.08, 1.22], row=1, col=2
    )
    fig.update_yaxes(title="importance (log-likelihood lost per token)", row=1, col=2)
    fig.update_layout(
        title=f"cross-attention heads against the true alignment · {result.model} · "
        f"{result.params.get('n')} held-out examples",
        showlegend=False,
    )
    return fig
