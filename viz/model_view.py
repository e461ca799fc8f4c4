"""The model view: every layer × head of one kind as thumbnails, one highlighted to enlarge."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlens.record.trace import Kind, Trace
from attnlens.viz.labels import position_labels
from attnlens.viz.picking import KIND_TITLES, allowed_of, attention_of, check_head, check_layer

# Float32 cells in all thumbnails together: keeps the figure's JSON under ~1.5 MB.
CELL_BUDGET = 250_000
MAX_SIDE = 64
GAP = 0.08  # fraction of a grid slot left blank between thumbnails


def model_view(
    trace: Trace, kind: Kind, selected: tuple[int, int] | None = None, max_side: int = MAX_SIDE
) -> go.Figure:
    """Thumbnails of all heads (trace i = layer i // H, head i % H); `selected` is outlined."""
    weights = attention_of(trace, kind)
    L, H, Q, K = weights.shape
    if selected is not None:
        check_layer(weights, selected[0])
        check_head(weights, selected[1])
    side = max(1, min(max_side, math.isqrt(CELL_BUDGET // (L * H))))
    q_edges, k_edges = block_edges(Q, side), block_edges(K, side)
    thumbs = block_share(weights, allowed_of(trace, kind), q_edges, k_edges)  # (L, H, q, k)
    q_tokens, k_tokens = trace.tokens(kind)
    y, x = _axis_values(q_tokens, q_edges), _axis_values(k_tokens, k_edges)
    traces = [_thumb(thumbs[i // H, i % H], i, H, x, y) for i in range(L * H)]
    layout = go.Layout(
        _grid_axes(L, H),
        title=f"{KIND_TITLES[kind]} · {L} layers × {H} heads" + _note(Q, K, q_edges, k_edges),
        coloraxis={"colorscale": "Blues", "cmin": 0.0, "cmax": 1.0, "colorbar": {"title": "share"}},
        annotations=_grid_labels(L, H),
        shapes=[] if selected is None else [_outline(*selected, H)],
        plot_bgcolor="white",
        margin={"l": 60, "r": 10, "t": 90, "b": 10},
        height=max(400, 70 * L + 100),
    )
    return go.Figure(traces, layout)


def block_edges(n: int, side: int) -> np.ndarray:
    """Equal blocks (the last may be shorter), at most `side` of them, covering 0..n: (b + 1,)."""
    size = -(-n // side)  # ceil
    return np.append(np.arange(0, n, size), n)


def block_share(
    weights: np.ndarray, allowed: np.ndarray, q_edges: np.ndarray, k_edges: np.ndarray
) -> np.ndarray:
    """Per block: mean over its queries of the attention they give its keys; rows still sum to 1.

    Blocks with no allowed cell are NaN, so masked areas stay distinct from low weights.
    """
    summed = np.add.reduceat(weights, k_edges[:-1], axis=-1)  # (L, H, Q, k)
    summed = np.add.reduceat(summed, q_edges[:-1], axis=-2)  # (L, H, q, k)
    rows = np.diff(q_edges)[:, None]  # (q, 1)
    any_allowed = np.add.reduceat(np.add.reduceat(allowed, k_edges[:-1], 1), q_edges[:-1], 0)
    return np.where(any_allowed > 0, summed / rows, np.nan).astype(np.float32)


def _axis_values(tokens: tuple[str, ...], edges: np.ndarray) -> list[str]:
    """Hover labels: the token itself when one position per block, else the position range."""
    if len(edges) - 1 == len(tokens):
        return position_labels(tokens)
    return [f"{a}–{b - 1}" for a, b in itertools.pairwise(edges)]


def _thumb(z: np.ndarray, i: int, H: int, x: list[str], y: list[str]) -> go.Heatmap:
    layer, head = divmod(i, H)
    return go.Heatmap(
        z=z,
        x=x,
        y=y,
        xaxis=f"x{axis_suffix(i)}",
        yaxis=f"y{axis_suffix(i)}",
        coloraxis="coloraxis",
        hoverongaps=False,
        meta=[layer, head],
        name=f"layer {layer} · head {head}",
        hovertemplate=f"layer {layer} · head {head}<br>query %{{y}}<br>key %{{x}}"
        "<br>share %{z:.4f}<extra></extra>",
    )


def axis_suffix(i: int) -> str:
    """Plotly names the first axes 'x'/'y' and then 'x2', 'x3', …: thumbnail i gets i + 1."""
    return "" if i == 0 else str(i + 1)


def _slot(row: int, col: int, L: int, H: int) -> tuple[list[float], list[float]]:
    """x and y domains of the thumbnail in grid row `row` (layer) and column `col` (head)."""
    x = [col / H, (col + 1 - GAP) / H]
    y = [1 - (row + 1 - GAP) / L, 1 - row / L]
    return x, y


def _grid_axes(L: int, H: int) -> dict[str, Any]:
    axes: dict[str, Any] = {}
    for i in range(L * H):
        x, y = _slot(*divmod(i, H), L, H)
        hidden = {"showticklabels": False, "showgrid": False, "zeroline": False, "ticks": ""}
        n = axis_suffix(i)
        axes[f"xaxis{n}"] = {"domain": x, "anchor": f"y{n}", "type": "category", **hidden}
        axes[f"yaxis{n}"] = {
            **{"domain": y, "anchor": f"x{n}", "type": "category", **hidden},
            "autorange": "reversed",
        }
    return axes


def _grid_labels(L: int, H: int) -> list[dict[str, Any]]:
    """'head h' over each column and 'layer l' left of each row."""
    heads = [
        {
            "text": f"head {h}",
            "x": (h + 0.46) / H,
            "y": 1.0,
            "yanchor": "bottom",
            "showarrow": False,
        }
        for h in range(H)
    ]
    layers = [
        {"text": f"layer {r}", "x": 0, "xanchor": "right", "y": 1 - (r + 0.46) / L}
        for r in range(L)
    ]
    for a in heads + layers:
        a.update(xref="paper", yref="paper", showarrow=False, font={"size": 10})
    return heads + layers


def _outline(layer: int, head: int, H: int) -> dict[str, Any]:
    n = axis_suffix(layer * H + head)
    box = {"x0": -0.02, "x1": 1.02, "y0": -0.02, "y1": 1.02}
    return {"type": "rect", "xref": f"x{n} domain", "yref": f"y{n} domain", **box,
            "line": {"color": "crimson", "width": 3}}  # fmt: skip


def _note(Q: int, K: int, q_edges: np.ndarray, k_edges: np.ndarray) -> str:
    blocks = (len(q_edges) - 1, len(k_edges) - 1)
    if blocks == (Q, K):
        return ""
    size = (int(q_edges[1] - q_edges[0]), int(k_edges[1] - k_edges[0]))
    return f" · thumbnails in {blocks[0]}×{blocks[1]} blocks of {size[0]}×{size[1]} positions"
