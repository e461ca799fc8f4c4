"""A weight is not what a head carries (Kobayashi et al. 2020): one head's attention on each key
beside what each key gives it, αᵢⱼ ‖f_h(xⱼ)‖, both as shares of their row's total; and a model's
layers, the weight and the norm share some keys take ([CLS] and [SEP], say), side by side."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.viz.shared.labels import token_text

WEIGHT, NORM, PICKED = "#4c78a8", "#f58518", "#d62728"  # the two measures; the keys asked about


def carried_view(
    tokens: Sequence[str],
    weights: np.ndarray,
    carried: np.ndarray,
    picked: Sequence[int] = (),
    title: str = "",
) -> go.Figure:
    """Two rows of bars over the keys: the head's weight on each (its rows' mean), and its
    share of what the head carries, Σᵢ αᵢⱼ ‖f(xⱼ)‖ over Σᵢⱼ; weights (Q, K), carried (K,). The
    picked keys' bars are outlined and their shares named in each row's title."""
    K = weights.shape[1]
    if carried.shape != (K,) or len(tokens) != K:
        raise ValueError(
            f"{K} keys need {K} tokens and {K} norms, got {len(tokens)} and {carried.shape}"
        )
    weight = weights.astype(np.float64).mean(0)  # (K,): sums to 1 over the keys
    norm = weights.astype(np.float64).sum(0) * carried
    norm = norm / norm.sum() if norm.sum() > 0 else norm
    chosen = np.zeros(K, dtype=bool)
    chosen[list(picked)] = True
    labels = [f"{j} {token_text(t)}" for j, t in enumerate(tokens)]
    rows = [("weight α (where it looks)", weight, WEIGHT),
            ("α·‖f(x)‖ (what it carries)", norm, NORM)]  # fmt: skip
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.14,
                        subplot_titles=[f"{name}: {share[chosen].sum():.0%} on the marked keys"
                                        for name, share, _ in rows])  # fmt: skip
    for row, (name, share, colour) in enumerate(rows, start=1):
        fig.add_trace(go.Bar(
            x=labels, y=share, name=name, marker={
                "color": colour, "line": {"color": [PICKED if c else colour for c in chosen],
                                          "width": [3 if c else 0 for c in chosen]}},
            hovertemplate="%{x}<br>%{y:.1%}<extra>" + name + "</extra>",
        ), row=row, col=1)  # fmt: skip
        fig.update_yaxes(tickformat=".0%", rangemode="tozero", row=row, col=1)
    fig.update_layout(title=title, plot_bgcolor="white", showlegend=False, bargap=0.15)
    return fig


def shares_by_layer(weight: np.ndarray, norm: np.ndarray, keys: str = "[CLS] + [SEP]") -> go.Figure:
    """Per layer, the share of the heads' weight on `keys` beside their share of what the
    heads carry (each the mean over heads; analysis/norm_shares.py)."""
    if weight.shape != norm.shape or weight.ndim != 1:
        raise ValueError(f"one share per layer each, got {weight.shape} and {norm.shape}")
    layers = [f"layer {i}" for i in range(len(weight))]
    fig = go.Figure([
        go.Bar(x=layers, y=weight, name="weight α", marker={"color": WEIGHT},
               hovertemplate="%{x}: %{y:.1%} of the weight<extra></extra>"),
        go.Bar(x=layers, y=norm, name="α·‖f(x)‖", marker={"color": NORM},
               hovertemplate="%{x}: %{y:.1%} of what the heads carry<extra></extra>"),
    ])  # fmt: skip
    fig.update_layout(
        title=f"share on {keys}: weight against what the heads carry",
        yaxis={"tickformat": ".0%", "range": [0, 1]}, barmode="group", plot_bgcolor="white",
    )  # fmt: skip
    return fig
