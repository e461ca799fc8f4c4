"""Why §3.2.1 divides by √d_k: unscaled dot products grow with d_k and saturate the softmax."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.viz.shared.labels import position_labels, token_text, wrapped
from attnlens.viz.shared.palette import BLUE, RED

D_KS = (4, 16, 64, 256, 1024)
TOP_MARGIN = 100  # px: the title, and the panel titles (two lines at most) under it
NBSP = "\u00a0"  # keeps "d_k = 16" on one line of a wrapped title
TITLE_CHARS = 16  # a panel title's lines: 24 px projector text in a panel of ~170 px
UNSCALED, SCALED = RED, BLUE


@dataclass(frozen=True)
class Saturation:
    """For each d_k, the mean largest softmax weight over random rows, unscaled and scaled."""

    d_ks: tuple[int, ...]
    unscaled: tuple[float, ...]  # mean max softmax(q·k) over rows
    scaled: tuple[float, ...]  # mean max softmax(q·k / √d_k)
    n_keys: int


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def saturation(
    d_ks: Sequence[int] = D_KS, n_keys: int = 8, rows: int = 400, seed: int = 0
) -> Saturation:
    """q and k with independent unit-variance components, as the paper's footnote assumes:
    q·k then has variance d_k, so without the division one key takes nearly all the weight."""
    if not d_ks or min(d_ks) < 1:
        raise ValueError(f"every d_k must be at least 1, got {list(d_ks)}")
    if n_keys < 2 or rows < 1:
        raise ValueError(f"need at least 2 keys and 1 row, got {n_keys} keys and {rows} rows")
    rng = np.random.default_rng(seed)
    unscaled, scaled = [], []
    for d_k in d_ks:
        q = rng.standard_normal((rows, 1, d_k))  # (R, 1, d_k)
        k = rng.standard_normal((rows, n_keys, d_k))  # (R, K, d_k)
        scores = (q * k).sum(-1)  # (R, K)
        unscaled.append(float(_softmax(scores).max(-1).mean()))
        scaled.append(float(_softmax(scores / np.sqrt(d_k)).max(-1).mean()))
    return Saturation(tuple(d_ks), tuple(unscaled), tuple(scaled), n_keys)


def telling_row(q: np.ndarray, k: np.ndarray, allowed: np.ndarray | None = None) -> int:
    """The query whose largest weight the division by √d_k changes most: the row that shows
    what the scaling does (a row that is peaked either way, such as one query putting 0.99 on
    one key, shows two equal bars). q (T_q, d_k), k (T_k, d_k); allowed (T_q, T_k)."""
    scores = np.asarray(q, np.float64) @ np.asarray(k, np.float64).T  # (T_q, T_k)
    ok = np.ones_like(scores, bool) if allowed is None else np.asarray(allowed, bool)
    unscaled = _softmax(np.where(ok, scores, -np.inf)).max(-1)
    scaled = _softmax(np.where(ok, scores / np.sqrt(q.shape[1]), -np.inf)).max(-1)
    return int(np.argmax(unscaled - scaled))


def saturation_view(
    q: np.ndarray,
    k: np.ndarray,
    query: int,
    query_token: str,
    key_tokens: Sequence[str],
    allowed: np.ndarray | None = None,
    curve: Saturation | None = None,
) -> go.Figure:
    """Left: the mean largest weight as d_k grows, with and without ÷√d_k (random q, k).
    Right: this head's own query row, softmax(q·K/√d_k) as the model computes it beside
    softmax(q·K) unscaled. q (T_q, d_k), k (T_k, d_k); allowed (T_q, T_k) True = may attend."""
    if not 0 <= query < q.shape[0]:
        raise ValueError(f"query {query} is outside 0..{q.shape[0] - 1}")
    curve = curve or saturation()
    d_k = q.shape[1]
    row = np.asarray(q[query], np.float64) @ np.asarray(k, np.float64).T  # (T_k,)
    ok = np.ones_like(row, bool) if allowed is None else np.asarray(allowed[query], bool)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.45, 0.55],
        horizontal_spacing=0.12,
        subplot_titles=(  # wrapped: on the Lecture's column at 1400 px, the legend beside the
            # panels, a panel is ~170 px: wider, a title ran over the other and the top tick
            # short: four lines of 24 px took the plots' height (the axes name what is drawn)
            wrapped(f"random q, k ({curve.n_keys}{NBSP}keys)", TITLE_CHARS),
            wrapped(
                f"query {query} · {token_text(query_token)}, d_k{NBSP}={NBSP}{d_k}", TITLE_CHARS
            ),
        ),
    )
    for values, name, colour in (
        (curve.unscaled, "softmax(q·k)", UNSCALED),
        (curve.scaled, "softmax(q·k / √d_k)", SCALED),
    ):
        fig.add_trace(
            go.Scatter(
                x=list(curve.d_ks),
                y=list(values),
                mode="lines+markers",
                name=name,
                line={"color": colour, "width": 3},
                hovertemplate="d_k %{x}<br>mean largest weight %{y:.3f}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    labels = position_labels(key_tokens)
    for scale, name, colour in ((1.0, "unscaled", UNSCALED), (np.sqrt(d_k), "÷ √d_k", SCALED)):
        weights = _softmax(np.where(ok, row / scale, -np.inf))
        fig.add_trace(
            go.Bar(
                x=labels,
                y=weights,
                name=f"this row, {name}",
                marker_color=colour,
                hovertemplate="key %{x}<br>weight %{y:.3f}<extra></extra>",
            ),
            row=1,
            col=2,
        )
    fig.add_vline(x=d_k, line_dash="dot", line_color="#888", row=1, col=1)
    # the d_k measured, and only those: a log axis's own minor labels (2, 5) are drawn at
    # three quarters of the text size, too small on a projector
    fig.update_xaxes(type="log", title="d_k", tickvals=list(curve.d_ks), row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], title="largest weight", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], title="weight", row=1, col=2)
    fig.update_xaxes(type="category", row=1, col=2)
    fig.update_layout(
        barmode="group",
        title={"text": "§3.2.1: why divide by √d_k", "y": 1, "yanchor": "top", "pad": {"t": 12}},
        # at the right, where Plotly makes room for it: under the plots, grown to projector
        # text, it lay over the d_k axis's title
        legend={"x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
        margin={"t": TOP_MARGIN},
    )
    return fig
