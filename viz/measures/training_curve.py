"""Training at a glance: the loss, and held-out scores of each snapshot, with the one shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.viz.shared.palette import RED
from attnlens.viz.shared.style import panel_title

MARKER_COLOR = RED


def training_curve(
    loss_steps: Sequence[int],
    losses: Sequence[float],
    snapshot_steps: Sequence[int],
    scores: Mapping[str, Sequence[float]],
    current_step: int | None = None,
) -> go.Figure:
    """Loss against step (left) and each score against snapshot step (right), steps on a log
    axis; a dashed line marks current_step on both. scores: name -> one value per snapshot,
    each a share in [0, 1] (exact match, a head's alignment, ...); without any, the loss
    alone."""
    for name, values in scores.items():
        if len(values) != len(snapshot_steps):
            raise ValueError(
                f"score {name!r} has {len(values)} values for {len(snapshot_steps)} snapshots"
            )
    if len(loss_steps) != len(losses):
        raise ValueError(f"{len(loss_steps)} loss steps for {len(losses)} losses")
    panels = ["training loss (one batch per point)", "held out, at each snapshot"][
        : 2 if scores else 1
    ]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=panels, horizontal_spacing=0.12)
    fig.add_trace(
        go.Scatter(
            x=list(loss_steps), y=list(losses), mode="lines", name="loss",
            hovertemplate="step %{x}<br>loss %{y:.3f}<extra></extra>",
        ),
        row=1, col=1,
    )  # fmt: skip
    for name, values in scores.items():
        fig.add_trace(
            go.Scatter(
                x=list(snapshot_steps), y=list(values), mode="lines+markers", name=name,
                hovertemplate=f"{name}<br>step %{{x}}<br>%{{y:.1%}}<extra></extra>",
            ),
            row=1, col=2,
        )  # fmt: skip
    if current_step is not None:
        for col in range(1, len(panels) + 1):
            fig.add_vline(x=current_step, line_dash="dash", line_color=MARKER_COLOR, row=1, col=col)
    fig.update_xaxes(type="log", title_text="training step")
    fig.update_yaxes(title_text="cross-entropy", row=1, col=1)
    if scores:
        fig.update_yaxes(title_text="share", range=[0, 1.02], tickformat=".0%", row=1, col=2)
    shown = f" · step {current_step} marked" if current_step is not None else ""
    fig.update_layout(panel_title(f"training{shown}"))
    fig.update_layout(
        height=360, margin={"l": 10, "r": 10, "b": 10}, legend={"orientation": "h", "y": -0.25},
    )  # fmt: skip
    return fig
