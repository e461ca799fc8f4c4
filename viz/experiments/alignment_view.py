"""Heads against the known truth drawn: each cross head's alignment accuracy by layer, and
beside it alignment against importance (are the aligned heads the important ones?)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.experiment import ExperimentResult
from attnlens.viz.shared.point_labels import placed_labels

ALIGNED = 0.8  # the dashed line: an alignment head aligns at least this share


def alignment_chart(result: ExperimentResult) -> go.Figure:
    """Left: alignment accuracy of every cross-attention head against its layer. Right: the
    same heads by alignment and importance (log-likelihood lost when ablated alone)."""
    h = result.heads
    names = [f"{layer}.{head}" for layer, head in zip(h["layer"], h["head"], strict=True)]
    rho = result.summary.get("spearman_alignment_importance")
    shown = "n/a" if rho is None else f"{rho:.2f}"
    layers = int(h["layer"].max()) + 1 if len(h) else 1
    x_span = (-0.4, layers - 0.3)
    left = placed_labels(h["layer"], h["aligned"], names, x_span, (0, 1.05), lines_y=[ALIGNED])
    right = placed_labels(h["aligned"], h["importance"], names, (-0.08, 1.22))
    fig = make_subplots(
        1, 2, subplot_titles=["which layers align?", f"aligned vs important (Spearman ρ = {shown})"]
    )
    fig.add_trace(
        go.Scatter(
            x=h["layer"],
            y=h["aligned"],
            mode="markers+text",
            text=left[0],
            customdata=names,
            textposition=left[1],
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
            text=right[0],
            customdata=names,
            textposition=right[1],
            marker={"size": 11},
            cliponaxis=False,  # a label above the top point stays whole (1.1 on translate)
            showlegend=False,
            hovertemplate="head %{customdata}<br>aligned %{x:.1%}<br>importance %{y:.4f}"
            "<extra></extra>",
        ),
        1,
        2,
    )
    fig.add_hline(y=ALIGNED, line={"dash": "dash", "color": "grey"}, layer="below", row=1, col=1)
    fig.update_xaxes(title="decoder layer", dtick=1, range=list(x_span), row=1, col=1)
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
