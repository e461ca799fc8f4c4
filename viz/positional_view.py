"""Positional encoding (§3.5): the matrix, a few dimensions as curves, similarity by offset."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from attnlens.record.trace import Trace

TITLES = (
    "encoding: position × dimension",
    "dimensions along the positions",
    "dot product PE(p) · PE(q)",
    "dot product against offset q − p",
)


def positional_encoding_of(trace: Trace) -> np.ndarray:
    """The (P, d_model) encoding the record holds, or a ValueError when there is none."""
    pe = trace.positional_encoding
    if pe is None:
        raise ValueError(f"{trace.model.name} records no positional encoding")
    return np.asarray(pe, dtype=np.float32)


def offset_similarity(pe: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each offset k ≥ 0: mean, min and max over p of PE(p) · PE(p + k); each (P,).

    For sinusoids the dot product depends on k only, so min and max coincide with the mean.
    """
    sim = pe @ pe.T  # (P, P)
    P = sim.shape[0]
    diags = [np.diagonal(sim, k) for k in range(P)]
    return tuple(np.array([f(d) for d in diags]) for f in (np.mean, np.min, np.max))  # type: ignore[return-value]


def positional_view(trace: Trace, dims: Sequence[int] = (0, 1, 4, 5)) -> go.Figure:
    """Four panels: the matrix, chosen dimensions as curves, similarity matrix, by offset."""
    pe = positional_encoding_of(trace)  # (P, d_model)
    P, d_model = pe.shape
    bad = [d for d in dims if not 0 <= d < d_model]
    if bad:
        raise ValueError(f"dimension {bad[0]} is outside 0..{d_model - 1} (d_model = {d_model})")
    fig = make_subplots(rows=2, cols=2, subplot_titles=TITLES, vertical_spacing=0.14)
    fig.add_trace(_matrix(pe), row=1, col=1)
    for n, d in enumerate(dims):
        fig.add_trace(_curve(pe, d, n), row=1, col=2)
    sim = pe @ pe.T  # (P, P)
    fig.add_trace(_similarity(sim), row=2, col=1)
    for trace_ in _by_offset(pe):
        fig.add_trace(trace_, row=2, col=2)
    fig.update_xaxes(title_text="dimension", row=1, col=1)
    fig.update_xaxes(title_text="position", row=1, col=2)
    fig.update_xaxes(title_text="position q", row=2, col=1)
    fig.update_xaxes(title_text="offset q − p", row=2, col=2)
    fig.update_yaxes(title_text="position", autorange="reversed", row=1, col=1)
    fig.update_yaxes(title_text="position p", autorange="reversed", row=2, col=1)
    fig.update_layout(
        title=f"positional encoding · {P} positions × {d_model} dimensions",
        coloraxis={"colorscale": "RdBu", "cmid": 0, "colorbar": {"title": "PE", "y": 0.8,
                   "len": 0.4}},
        coloraxis2={"colorscale": "Viridis", "colorbar": {"title": "PE·PE", "y": 0.2, "len": 0.4}},
        height=800,
        legend={"orientation": "h", "y": -0.12},
    )  # fmt: skip
    return fig


def _matrix(pe: np.ndarray) -> go.Heatmap:
    return go.Heatmap(
        z=pe,
        coloraxis="coloraxis",
        hovertemplate="position %{y}<br>dimension %{x}<br>PE %{z:.4f}<extra></extra>",
        name="encoding",
    )


def _curve(pe: np.ndarray, d: int, n: int) -> go.Scatter:
    kind = "sin" if d % 2 == 0 else "cos"
    return go.Scatter(
        x=np.arange(pe.shape[0]),
        y=pe[:, d],
        mode="lines+markers",
        name=f"dim {d} ({kind})",
        line={"color": qualitative.Plotly[n % len(qualitative.Plotly)]},
        hovertemplate=f"dim {d}<br>position %{{x}}<br>PE %{{y:.4f}}<extra></extra>",
    )


def _similarity(sim: np.ndarray) -> go.Heatmap:
    return go.Heatmap(
        z=sim.astype(np.float32),
        coloraxis="coloraxis2",
        hovertemplate="p %{y} · q %{x}<br>dot product %{z:.4f}<extra></extra>",
        name="similarity",
    )


def _by_offset(pe: np.ndarray) -> list[go.Scatter]:
    """Mean over p of PE(p)·PE(p+k), with a min–max band showing (in)dependence on p."""
    mean, low, high = offset_similarity(pe)
    k = np.arange(mean.size)
    band = go.Scatter(
        x=np.concatenate([k, k[::-1]]),
        y=np.concatenate([high, low[::-1]]),
        fill="toself",
        line={"width": 0},
        fillcolor="rgba(99,110,250,0.25)",
        name="min–max over p",
        hoverinfo="skip",
    )
    line = go.Scatter(
        x=k,
        y=mean,
        mode="lines",
        line={"color": "rgb(99,110,250)"},
        name="mean over p",
        hovertemplate="offset %{x}<br>dot product %{y:.4f}<extra></extra>",
    )
    return [band, line]
