"""Clickable thumbnails: Plotly heatmaps cannot be selected, so each model-view thumbnail gets
an invisible scatter over its cells whose points carry [layer, head, share]."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def clickable_thumbnails(fig: go.Figure) -> go.Figure:
    """A copy of a model view (viz.model_view) where clicking a cell selects its thumbnail.

    Each heatmap with meta [layer, head] gets a transparent marker at every cell, on the same
    axes; the marker takes over the hover text, so the figure reads as before.
    """
    out = go.Figure(fig)
    for thumb in [t for t in out.data if isinstance(t, go.Heatmap) and t.meta is not None]:
        layer, head = (int(v) for v in thumb.meta)
        z = np.asarray(thumb.z, dtype=np.float64)  # (q, k)
        ys, xs = np.meshgrid(np.arange(z.shape[0]), np.arange(z.shape[1]), indexing="ij")
        keep = np.isfinite(z).ravel()
        x_labels, y_labels = np.asarray(thumb.x, dtype=object), np.asarray(thumb.y, dtype=object)
        shares = z.ravel()[keep]
        out.add_trace(
            go.Scatter(
                x=x_labels[xs.ravel()[keep]],
                y=y_labels[ys.ravel()[keep]],
                xaxis=thumb.xaxis,
                yaxis=thumb.yaxis,
                mode="markers",
                marker={"size": 14, "opacity": 0.0, "symbol": "square"},
                customdata=[[layer, head, s] for s in shares],
                hovertemplate=f"layer {layer} · head {head} (click to enlarge)<br>"
                "query %{y}<br>key %{x}<br>share %{customdata[2]:.4f}<extra></extra>",
                showlegend=False,
            )
        )
        thumb.hoverinfo = "skip"
    return out
