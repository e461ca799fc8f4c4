"""The head statistics chart: layers × heads coloured by one statistic of analysis/head_stats.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from attnlens.analysis.head_stats import COLUMNS
from attnlens.record.picking import KIND_TITLES
from attnlens.record.trace import Kind
from attnlens.viz.shared.palette import MEASURE


def head_stats_chart(stats: pd.DataFrame, kind: Kind, metric: str = "entropy") -> go.Figure:
    """Layers × heads coloured by one statistic of one kind, each cell labelled with its tag."""
    if metric not in COLUMNS[3:-1]:
        raise ValueError(f"metric must be one of {', '.join(COLUMNS[3:-1])}, got {metric!r}")
    rows = stats[stats["kind"] == kind]
    if rows.empty:
        raise ValueError(f"no statistics for {kind}; the table has {sorted(set(stats['kind']))}")
    grid = rows.pivot(index="layer", columns="head", values=metric)  # (L, H)
    tags = rows.pivot(index="layer", columns="head", values="tag").to_numpy(dtype=object)
    short = np.vectorize(lambda t: t.replace(" head", ""), otypes=[object])(tags)
    fig = go.Figure(
        go.Heatmap(
            z=grid.to_numpy(dtype=np.float64),
            x=[f"head {h}" for h in grid.columns],
            y=[f"layer {r}" for r in grid.index],
            text=short,
            texttemplate="%{text}",
            customdata=tags,
            colorscale=MEASURE,
            colorbar={"title": metric},
            hovertemplate=f"%{{y}} · %{{x}}<br>{metric} %{{z:.4f}}<br>%{{customdata}}"
            "<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    fig.update_layout(
        title=f"head statistics · {KIND_TITLES[kind]} · {metric}",
        yaxis={"autorange": "reversed"},
        plot_bgcolor="white",
    )
    return fig
