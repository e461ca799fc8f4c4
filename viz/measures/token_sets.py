"""A token set's attention in every head: one layers × heads grid (a square per head, coloured by
the set's share of attention, its exact number on hover), and the chosen head's profile over
positions (analysis/token_sets.py computes both from the record)."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlens.analysis.token_sets import SetAttention
from attnlens.record.picking import KIND_TITLES
from attnlens.record.trace import Trace
from attnlens.viz.heads.colour_scale import (
    HOVER_DIGITS,
    Scale,
    check_scale,
    colorbar,
    colorscale,
    colour_position,
    measure_title,
)
from attnlens.viz.shared.labels import hover_labels
from attnlens.viz.shared.margins import BASE_FONT
from attnlens.viz.shared.palette import MARK

GRID_WIDTH = 640  # px the squares of one layer may take
SQUARE_PX = (8, 32)  # a head's square, at least and at most
OUTLINE = MARK
MIN_HEIGHT = 320  # px of the grid whatever its layers
HEAD_LABEL_PX = 30  # px a head's number takes at the projector's size, with room beside it
BARS_UP_TO = 512  # positions a profile draws as bars; past this, as a filled line


def describe(result: SetAttention) -> str:
    """What a square of the grid is, in words (the norm measure's αᵢⱼ ‖f(xⱼ)‖ named)."""
    n = len(result.positions)
    queries = f"{n} {'query' if n == 1 else 'queries'}"
    keys = f"{n} {'key' if n == 1 else 'keys'}"
    if result.measure == "norm":
        if result.side == "queries":
            return f"{queries}: the largest mean α‖f(x)‖ one key gives them (norm)"
        return f"{keys}: the α‖f(x)‖ they give, summed, mean over every query (norm)"
    if result.side == "queries":
        return f"{queries}: the largest mean weight one key gets from them"
    return f"{keys}: the share of all attention they receive (mean over every query)"


def unit_of(result: SetAttention) -> float:
    """What the squares' colours are relative to: 1 for weights, the largest square's number
    for the norm measure (α‖f(x)‖ is not bounded by 1)."""
    if result.measure != "norm" or not np.isfinite(result.summary).any():
        return 1.0
    return float(np.nanmax(result.summary)) or 1.0


def square_px(n_heads: int) -> int:
    """The side of a head's square: the layer's row fits GRID_WIDTH."""
    return int(np.clip(GRID_WIDTH // max(n_heads, 1) - 4, *SQUARE_PX))


def token_set_grid(
    trace: Trace,
    result: SetAttention,
    scale: Scale = "perceptual",
    selected: tuple[int, int] | None = None,
) -> go.Figure:
    """Every head as a square, layer by row and head by column, coloured by result.summary;
    the hover gives the number (and, for a query set, the key it is on); `selected` outlined.
    Squares are scatter points so a click on one reports its head."""
    check_scale(scale)
    L, H = result.summary.shape
    layer, head = (a.ravel() for a in np.indices((L, H)))
    values = result.summary.ravel()
    keys = hover_labels(*_key_tokens(trace, result))
    if result.peak is None:
        texts = [f"layer {la} · head {h}<br>the set receives {v:.{HOVER_DIGITS}f}"
                 for la, h, v in zip(layer, head, values, strict=True)]  # fmt: skip
    else:
        peaks = result.peak.ravel()
        texts = [f"layer {la} · head {h}<br>looks most at {keys[j]}: {v:.{HOVER_DIGITS}f}"
                 for la, h, j, v in zip(layer, head, peaks, values, strict=True)]  # fmt: skip
    side = square_px(H)
    squares = go.Scatter(
        x=head, y=layer, mode="markers", hovertext=texts, hoverinfo="text", name="",
        customdata=np.stack([layer, head], -1), showlegend=False,
        selected={"marker": {"opacity": 1}}, unselected={"marker": {"opacity": 1}},
        marker={"symbol": "square", "size": side,
                "color": colour_position(values / unit_of(result), scale),
                "colorscale": colorscale(), "cmin": 0.0, "cmax": 1.0,
                "colorbar": _bar(scale, result), "line": {"width": 0}},
    )  # fmt: skip
    layers = [squares]
    if selected is not None:
        layers.append(_outline(*selected, side))
    title = f"{KIND_TITLES[result.kind]} · {describe(result)}"
    return go.Figure(layers, layout=_grid_layout(title, L, H, side))


def _bar(scale: Scale, result: SetAttention) -> dict[str, Any]:
    """The colour bar; a key set's number is a share of attention, not one weight; the norm
    measure's, a share of the largest square's."""
    bar = colorbar(scale)
    if result.measure == "norm":
        bar["title"] = {"text": measure_title(scale, unit_of(result))}
    elif result.side == "keys":
        bar["title"] = {"text": bar["title"]["text"].replace("weight", "share")}
    return bar


def _outline(layer: int, head: int, side: int) -> go.Scatter:
    return go.Scatter(
        x=[head], y=[layer], mode="markers", hoverinfo="skip", showlegend=False,
        marker={"symbol": "square-open", "size": side + 4, "color": OUTLINE,
                "line": {"width": 2, "color": OUTLINE}},
    )  # fmt: skip


def head_label_step(side: int) -> int:
    """Every how many heads a column is numbered: a two-digit number at the projector's 24 px
    needs HEAD_LABEL_PX (32 heads of 16 px squares, numbered each, ran "1011121314" together
    in presentation mode)."""
    return max(1, -(-HEAD_LABEL_PX // (side + 4)))


def _grid_layout(title: str, L: int, H: int, side: int) -> go.Layout:
    height = max(L * (side + 4) + 150, MIN_HEIGHT)  # the colour bar stays readable
    return go.Layout(
        title={"text": title, "font": {"size": BASE_FONT + 2}},
        height=height, width=min(H * (side + 4), GRID_WIDTH) + 220,
        xaxis={"title": {"text": "head"}, "tickmode": "array",
               "tickvals": list(range(0, H, head_label_step(side))),
               "range": [-0.6, H - 0.4], "showgrid": False, "zeroline": False},
        yaxis={"title": {"text": "layer"}, "tickmode": "array", "tickvals": list(range(L)),
               "range": [L - 0.4, -0.6], "showgrid": False, "zeroline": False},
        margin={"l": 70, "r": 20, "t": 70, "b": 60}, hovermode="closest",
        clickmode="event+select", dragmode=False,
    )  # fmt: skip


def _key_tokens(trace: Trace, result: SetAttention) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(raw, shown) tokens of the positions a profile runs over: keys for a query set,
    queries for a key set."""
    at = 1 if result.side == "queries" else 0
    return trace.tokens(result.kind)[at], trace.shown(result.kind)[at]


def token_set_profile(trace: Trace, result: SetAttention, layer: int, head: int) -> go.Figure:
    """One head's profile: for a query set the mean of their rows over every key, for a key
    set each query's weight summed over the set; the hover names each position's token."""
    L, H = result.summary.shape
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"layer {layer}, head {head} is outside the {L} × {H} heads")
    values = result.profile[layer, head]
    labels = hover_labels(*_key_tokens(trace, result))
    texts = [f"{t}: {v:.{HOVER_DIGITS}f}" for t, v in zip(labels, values, strict=True)]
    x = np.arange(len(values))
    if len(values) <= BARS_UP_TO:
        trace_ = go.Bar(x=x, y=values, hovertext=texts, hoverinfo="text", name="")
    else:
        trace_ = go.Scatter(x=x, y=values, hovertext=texts, hoverinfo="text", name="",
                            mode="lines", fill="tozeroy")  # fmt: skip
    if result.side == "queries":
        what, axis = "mean weight of the set's queries", "key position"
    else:
        what, axis = "weight each query gives the set", "query position"
    quantity = "α‖f(x)‖" if result.measure == "norm" else "weight"
    what = what.replace("weight", quantity)
    return go.Figure(
        [trace_],
        layout=go.Layout(
            title={"text": f"layer {layer} · head {head}: {what}"},
            # "~g": 0.0003 as such (Plotly's own format wrote "300μ", a unit no weight has)
            xaxis={"title": {"text": axis}},
            yaxis={"title": {"text": quantity}, "tickformat": "~g"},
            height=320, margin={"l": 70, "r": 20, "t": 60, "b": 50}, showlegend=False,
        ),
    )  # fmt: skip
