"""Cross-attention of a decoding run: the row each step added, along the chosen hypothesis."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlens.record.decode import DecodeRun
from attnlens.viz.decoding.beam import chosen_path
from attnlens.viz.heads.heatmap import cell_gap, grid_layout
from attnlens.viz.shared.labels import positions_axis, token_axis, token_text
from attnlens.viz.shared.palette import ALIGNMENT


def decoding_alignment(
    run: DecodeRun, layer: int | None = None, head: int | None = None
) -> go.Figure:
    """Step × source: the new position's cross-attention row at each step (heads averaged)."""
    first = run.steps[0].cross_attention if run.steps else None
    if first is None:
        raise ValueError("this run records no cross-attention (no steps, or a decoder-only model)")
    L, H = first.shape[:2]
    layer = L - 1 if layer is None else layer
    if not 0 <= layer < L:
        raise ValueError(f"layer {layer} is outside 0..{L - 1} ({L} layers)")
    if head is not None and not 0 <= head < H:
        raise ValueError(f"head {head} is outside 0..{H - 1} ({H} heads)")
    path = chosen_path(run)
    rows = [_row(run, t, b.parent, layer, head) for t, b in enumerate(path)]  # each (S,)
    which = "mean of heads" if head is None else f"head {head}"
    cols = positions_axis(run.src_tokens)
    chosen = token_axis([f"step {t} → {token_text(b.token)}" for t, b in enumerate(path)])
    fig = go.Figure(
        go.Heatmap(
            z=np.stack(rows).astype(np.float32),  # (steps, S)
            x=cols.values,
            y=chosen.values,
            zmin=0.0,
            zmax=1.0,
            colorscale=ALIGNMENT,
            colorbar={"title": {"text": "weight"}},
            hovertemplate="%{y}<br>source %{x}<br>weight %{z:.7g}<extra></extra>",
            xgap=cell_gap(len(cols.values)),
            ygap=cell_gap(len(chosen.values)),
        )
    )
    title = f"cross-attention row added at each step · layer {layer} · {which} · {run.strategy}"
    fig.update_layout(grid_layout(title, cols, chosen, "source", "step → token chosen"))
    if not cols.ticks:  # every source token fits: each labelled, however narrow the figure
        fig.update_xaxes(dtick=1)
    return fig


def _row(run: DecodeRun, step: int, parent: int | None, layer: int, head: int | None) -> np.ndarray:
    """The (S,) cross-attention of the live row the chosen path extended at this step."""
    att = run.steps[step].cross_attention  # (L, H, B, S)
    assert att is not None  # every step of an encoder-decoder run records it
    row = att[layer, :, 0 if parent is None else parent]  # (H, S)
    out: np.ndarray = row.mean(0) if head is None else row[head]
    return out
