"""Head importance drawn: the pruning curve (heads removed least important first) and, on an
encoder-decoder, one curve per kind of attention (Michel et al. 2019, Fig. 3)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.experiment import ExperimentResult
from attnlens.record.picking import KIND_TITLES

SCORES = {  # the score a head's ablation lowers, by its column in the pruning table
    "loglik": "log-likelihood per token",
    "similarity": "output similarity to the whole model",
}


def score_of(result: ExperimentResult) -> str:
    """The pruning table's score column: an encoder's output similarity, else log-likelihood."""
    return "similarity" if "similarity" in result.summary else "loglik"


def importance_chart(result: ExperimentResult) -> go.Figure:
    """Each head's importance (drop in log-likelihood per token, or in an encoder's output
    similarity, when it alone is ablated) and Voita's confidence, per head."""
    h = result.heads
    names = [
        f"{k.split('_')[0]} {layer}.{head}"
        for k, layer, head in zip(h["kind"], h["layer"], h["head"], strict=True)
    ]
    fig = make_subplots(
        2,
        1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[
            f"importance: {SCORES[score_of(result)]} lost",
            "confidence: mean largest weight (Voita et al.)",
        ],
    )
    fig.add_trace(go.Bar(x=names, y=h["importance"], name="importance"), 1, 1)
    fig.add_trace(go.Bar(x=names, y=h["confidence"], name="confidence"), 2, 1)
    fig.update_layout(title=f"head importance · {result.model}", showlegend=False)
    return fig


def pruning_curve(result: ExperimentResult) -> go.Figure:
    """Exact match (greedy, beam) or log-likelihood against the share of heads removed; beside
    it the same within each kind of attention, the others kept."""
    curve = result.tables.get("pruning")
    if curve is None or curve.empty:
        raise ValueError(
            f"{result.model}: no pruning curve was measured ({'; '.join(result.notes)})"
        )
    by_kind = result.tables.get("pruning_by_kind")
    task = curve["exact_greedy"].notna().any()
    score = score_of(result)
    column, label = ("exact_greedy", "exact match") if task else (score, SCORES[score])
    two = by_kind is not None and not by_kind.empty
    fig = make_subplots(
        1,
        2 if two else 1,
        subplot_titles=(
            ["all heads, least important first", "one kind at a time"] if two else None
        ),
    )
    hover = "%{customdata}<br>%{x:.0%} pruned: %{y:.3f}<extra></extra>"
    fig.add_trace(
        go.Scatter(
            x=curve["fraction_pruned"],
            y=curve[column],
            mode="lines+markers",
            name="greedy" if task else label,
            customdata=curve["removed"],
            hovertemplate=hover,
        ),
        1,
        1,
    )
    if task and curve["exact_beam"].notna().any():
        fig.add_trace(
            go.Scatter(
                x=curve["fraction_pruned"],
                y=curve["exact_beam"],
                mode="lines+markers",
                name="beam (4)",
                line={"dash": "dot"},
                customdata=curve["removed"],
                hovertemplate=hover,
            ),
            1,
            1,
        )
    if by_kind is not None and two:
        for kind in by_kind["kind"].unique():
            rows = by_kind[by_kind["kind"] == kind]
            fig.add_trace(
                go.Scatter(
                    x=[0.0, *rows["fraction_pruned"]],
                    y=[curve[column].iloc[0], *rows[column]],
                    mode="lines+markers",
                    name=KIND_TITLES[kind].split(" (")[0],
                ),
                1,
                2,
            )
        fig.update_xaxes(title="share of that kind's heads removed", tickformat=".0%", row=1, col=2)
    fig.update_xaxes(title="share of heads removed", tickformat=".0%", row=1, col=1)
    fig.update_yaxes(title=label)
    fig.update_layout(title=f"pruning heads · {result.model} · {result.params.get('n')} examples")
    return fig
