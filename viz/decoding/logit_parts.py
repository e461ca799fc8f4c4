"""Which heads wrote a token: a direct logit attribution record (record/attribution.py) drawn as
each kind's layers × heads, coloured by each head's part of the logit (red raises it, blue lowers
it), beside the parts that are not heads: the embeddings, each layer's MLP, the biases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.attribution import LogitAttribution
from attnlens.record.picking import KIND_TITLES

RAISES, LOWERS = "#b2182b", "#2166ac"  # the ends of the diverging scale
SCALE = [[0, LOWERS], [0.5, "#f7f7f7"], [1, RAISES]]
# under the grids, not beside them, where it covered the first grid's layer labels
COLORBAR = {"title": {"text": "part of the logit", "side": "top"}, "orientation": "h",
            "x": 0.0, "xanchor": "left", "y": -0.2, "yanchor": "top", "len": 0.45,
            "thickness": 12}  # fmt: skip
SHORT = {"decoder_self": "self-attention", "cross": "cross-attention"}  # bar labels


def other_parts(record: LogitAttribution) -> pd.DataFrame:
    """The parts that are not heads, in the order they write the stream: `part`, `value`;
    then each kind's heads summed."""
    rows = [("embeddings", record.embeddings)]
    rows += [(f"MLP {i}", float(v)) for i, v in enumerate(record.mlp)]
    rows += [(f"bias: {name}", value) for name, value in record.biases.items()]
    rows += [(f"all {SHORT.get(k, k)} heads", float(v.sum())) for k, v in record.heads.items()]
    return pd.DataFrame(rows, columns=["part", "value"])


def logit_parts(record: LogitAttribution, token: str | None = None) -> go.Figure:
    """The heads' parts as heatmaps (one per kind, a colour scale centred on 0 and symmetric),
    and the other parts as bars; the title names the token, its logit and what was frozen.
    token: the token as a person reads it (default: as recorded)."""
    kinds = list(record.heads)
    fig = make_subplots(
        rows=1, cols=len(kinds) + 1, column_widths=[*([1.0] * len(kinds)), 0.9],
        subplot_titles=[*(f"{KIND_TITLES[k]} heads" for k in kinds), "other parts"],  # type: ignore[index]
        horizontal_spacing=0.17,  # room for the bars' labels and the next grid's layers
    )  # fmt: skip
    reach = max([float(np.abs(v).max()) for v in record.heads.values()] + [1e-12])
    for col, kind in enumerate(kinds, start=1):
        parts = record.heads[kind]  # (L, H)
        fig.add_trace(go.Heatmap(
            z=parts, x=[f"head {h}" for h in range(parts.shape[1])],
            y=[f"layer {i}" for i in range(parts.shape[0])],
            zmin=-reach, zmax=reach, zmid=0, colorscale=SCALE,
            showscale=col == 1, colorbar=COLORBAR,
            hovertemplate="%{y} · %{x}<br>part of the logit %{z:+.4f}<extra></extra>",
            xgap=2, ygap=2,
        ), row=1, col=col)  # fmt: skip
        fig.update_yaxes(autorange="reversed", row=1, col=col)
    others = other_parts(record)
    fig.add_trace(go.Bar(
        x=others["value"], y=others["part"], orientation="h",
        marker={"color": [RAISES if v >= 0 else LOWERS for v in others["value"]]},
        hovertemplate="%{y}<br>part of the logit %{x:+.4f}<extra></extra>",
    ), row=1, col=len(kinds) + 1)  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category", row=1, col=len(kinds) + 1)
    shown = record.token if token is None else token
    capped = "" if record.softcap is None else f", {record.summed:+.4f} before the cap"
    fig.update_layout(
        title={"text": f"which parts wrote {shown!r}: logit {record.logit:+.4f}{capped} "
               f"(log p {record.logprob:.3f}) = the sum of the parts",
               "subtitle": {"text": f"direct logit attribution through {record.frozen}"}},
        plot_bgcolor="white", showlegend=False, margin={"t": 110, "b": 110},
    )  # fmt: skip
    return fig
