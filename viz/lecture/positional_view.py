"""Positional information (§3.5): what the model has, and when it is a table added to the
embeddings (sinusoidal or learned), the table, a few dimensions, similarity by offset."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.trace import Trace
from attnlens.viz.shared.palette import HEAD_COLOURS, MEASURE, PLOTLY_BLUE, SIGNED
from attnlens.viz.shared.style import panel_title

TABLE_SCHEMES = {
    "sinusoidal": "sinusoidal positional encoding (§3.5), added to the embeddings",
    "learned": "learned position embeddings, one trained vector per position added to the "
    "embeddings",
    None: "a positional table added to the embeddings (the record does not say whether it is "
    "sinusoidal or learned)",
}
NO_TABLE_SCHEMES = {
    "rotary": "rotary position embeddings (RoPE): queries and keys are rotated by their "
    "position inside every attention layer",
    "alibi": "ALiBi: a penalty growing with the distance is added to the attention scores",
    "relative": "relative position biases: a learned bias per distance is added to the "
    "attention scores",
    "none": "no positional information at all",
}
TABLE_NAMES = {
    "sinusoidal": "sinusoidal positional encoding",
    "learned": "learned position embeddings",
    None: "positional table (scheme not recorded)",
}
DRAWN = 512  # positions drawn at most: the similarity panel holds P² cells (1 M at 1,024)
TITLES = (
    "table: position (rows) × dimension (columns)",
    "chosen dimensions along the positions",
    "dot product PE(p) · PE(q)",
    "dot product against offset q − p",
)


def positional_scheme_text(trace: Trace) -> str:
    """What positional information the model that made this record has, in one phrase."""
    scheme = trace.positional_scheme
    if scheme in NO_TABLE_SCHEMES:
        return NO_TABLE_SCHEMES[scheme] + "; no table is added to the embeddings"
    if trace.positional_encoding is None:
        return "no positional table is recorded for this model"
    return TABLE_SCHEMES.get(scheme, TABLE_SCHEMES[None])


def positional_encoding_of(trace: Trace) -> np.ndarray:
    """The (P, d_model) table the record holds, or a ValueError saying what the model has."""
    pe = trace.positional_encoding
    if pe is None or trace.positional_scheme in NO_TABLE_SCHEMES:
        raise ValueError(
            f"{trace.model.name} records no positional encoding to draw: "
            f"{positional_scheme_text(trace)}"
        )
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
    """Four panels: the table, chosen dimensions as curves, similarity matrix, by offset.

    The title says which scheme the table is; colours span the values the table holds
    (a learned table near ±0.1 is not drawn on a ±1 scale; the hover has exact values)."""
    whole = positional_encoding_of(trace)  # (P, d_model)
    pe = whole[:DRAWN]  # (P, d_model): a long input's first DRAWN positions
    P, d_model = pe.shape
    bad = [d for d in dims if not 0 <= d < d_model]
    if bad:
        raise ValueError(f"dimension {bad[0]} is outside 0..{d_model - 1} (d_model = {d_model})")
    fig = make_subplots(
        rows=2, cols=2, subplot_titles=TITLES, vertical_spacing=0.26, horizontal_spacing=0.2
    )
    fig.add_trace(_matrix(pe), row=1, col=1)
    sinusoidal = trace.positional_scheme == "sinusoidal"
    for n, d in enumerate(dims):
        fig.add_trace(_curve(pe, d, n, sinusoidal), row=1, col=2)
    sim = pe @ pe.T  # (P, P)
    fig.add_trace(_similarity(sim), row=2, col=1)
    for trace_ in _by_offset(pe):
        fig.add_trace(trace_, row=2, col=2)
    # the table's axes go untitled (its panel title names them); the curves' x axis is titled,
    # standing off less than the lower panels' titles above their plots (vertical_spacing)
    fig.update_xaxes(title_text="position", title_standoff=4, row=1, col=2)
    fig.update_xaxes(title_text="position q", row=2, col=1)
    fig.update_xaxes(title_text="offset q − p", row=2, col=2)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_yaxes(title_text="position p", autorange="reversed", row=2, col=1)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    reach = robust_reach(pe)
    low, high = np.percentile(sim, [1, 99]) if sim.size else (0.0, 1.0)
    name = TABLE_NAMES.get(trace.positional_scheme, TABLE_NAMES[None])
    some = f"the first {P:,} of {len(whole):,}" if len(whole) > P else f"{P:,}"
    fig.update_layout(panel_title(f"{name} · {some} positions × {d_model} dimensions"))
    # each colour bar beside the heatmap it belongs to (the left column), in the gap between
    # the columns, not at the figure's right edge beside the line charts
    beside = float(fig.layout.xaxis.domain[1]) + 0.01
    top, bottom = fig.layout.yaxis.domain, fig.layout.yaxis3.domain
    fig.update_layout(
        coloraxis={"colorscale": SIGNED, "cmin": -reach, "cmax": reach,
                   "colorbar": _bar("value", beside, top)},
        coloraxis2={"colorscale": MEASURE, "cmin": float(low), "cmax": float(high),
                    "colorbar": _bar("PE·PE", beside, bottom)},
        height=720,
        # the legend at the foot of the figure, below the lower panels' axis titles
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
        margin={"l": 10, "r": 10, "b": 90},
    )  # fmt: skip
    return fig


def _bar(title: str, x: float, domain: tuple[float, float]) -> dict[str, object]:
    """A colour bar left-anchored at x, as tall as the panel whose domain it is given."""
    low, high = float(domain[0]), float(domain[1])
    return {
        "title": {"text": title, "side": "right"},
        "x": x, "xanchor": "left", "thickness": 14,
        "y": (low + high) / 2, "len": high - low, "yanchor": "middle",
    }  # fmt: skip


def robust_reach(values: np.ndarray) -> float:
    """The colour scale's half-width for a table: its 99th percentile of |value|, so a few
    outlying entries (BERT's position 0) saturate instead of washing out the rest."""
    reach = float(np.percentile(np.abs(values), 99)) if values.size else 0.0
    return reach or float(np.abs(values).max()) or 1.0


def _matrix(pe: np.ndarray) -> go.Heatmap:
    return go.Heatmap(
        z=pe,
        coloraxis="coloraxis",
        hovertemplate="position %{y}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>",
        name="table",
    )


def _curve(pe: np.ndarray, d: int, n: int, sinusoidal: bool) -> go.Scatter:
    wave = f" ({'sin' if d % 2 == 0 else 'cos'})" if sinusoidal else ""
    return go.Scatter(
        x=np.arange(pe.shape[0]),
        y=pe[:, d],
        mode="lines+markers",
        name=f"dim {d}{wave}",
        line={"color": HEAD_COLOURS[n % len(HEAD_COLOURS)]},
        hovertemplate=f"dim {d}<br>position %{{x}}<br>value %{{y:.4f}}<extra></extra>",
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
        line={"color": PLOTLY_BLUE},
        name="mean over p",
        hovertemplate="offset %{x}<br>dot product %{y:.4f}<extra></extra>",
    )
    return [band, line]
