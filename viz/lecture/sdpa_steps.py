"""Scaled dot-product attention (§3.2.1) one step at a time, with the actual numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attnlens.viz.heads.heatmap import cell_gap, drawn_labels
from attnlens.viz.shared.labels import positions_axis, token_axis
from attnlens.viz.shared.margins import grid_margins
from attnlens.viz.shared.palette import SIGNED, WEIGHTS

TEXT_CELLS = 24 * 24  # cells up to which each holds its number
STEP_TITLES = {
    "scores": "1 · Q·Kᵀ",
    "scaled": "2 · Q·Kᵀ / √d_k",
    "masked": "3 · masked (−∞ where not allowed)",
    "weights": "4 · softmax over each row",
    "output": "5 · weights · V",
}


@dataclass(frozen=True, eq=False)
class AttentionSteps:
    """Every intermediate of softmax(QKᵀ/√d_k) V for one head."""

    d_k: int
    scores: np.ndarray  # (T_q, T_k) Q·Kᵀ
    scaled: np.ndarray  # (T_q, T_k) divided by √d_k
    masked: np.ndarray  # (T_q, T_k) -inf where the mask forbids
    weights: np.ndarray  # (T_q, T_k) softmax of each row; masked entries exactly 0
    output: np.ndarray  # (T_q, d_k) weights · V


def attention_steps(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None
) -> AttentionSteps:
    """The five steps from Q (T_q, d_k), K and V (T_k, d_k) and a (T_q, T_k) boolean mask."""
    q64, k64, v64 = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if q64.shape[1] != k64.shape[1] or k64.shape[0] != v64.shape[0]:
        raise ValueError(f"Q {q64.shape}, K {k64.shape}, V {v64.shape} do not fit together")
    d_k = q64.shape[1]
    scores = q64 @ k64.T  # (T_q, T_k)
    scaled = scores / math.sqrt(d_k)
    allowed = np.ones_like(scaled, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    masked = np.where(allowed, scaled, -np.inf)
    shifted = np.exp(masked - masked.max(axis=1, keepdims=True))  # (T_q, T_k)
    weights = shifted / shifted.sum(axis=1, keepdims=True)
    return AttentionSteps(d_k, scores, scaled, masked, weights, weights @ v64)


def step_figure(
    steps: AttentionSteps, step: str, q_tokens: Sequence[str], k_tokens: Sequence[str]
) -> go.Figure:
    """One step as a heatmap with every number written in its cell (−∞ for masked cells), or
    in the hover alone when the cells are too many to hold them."""
    if step not in STEP_TITLES:
        raise ValueError(f"step must be one of {', '.join(STEP_TITLES)}, got {step!r}")
    z: np.ndarray = getattr(steps, step)
    rows = positions_axis(q_tokens)
    cols = (
        positions_axis(k_tokens)
        if step != "output"
        else token_axis([f"dim {j}" for j in range(steps.d_k)])
    )
    x, y = cols.values, rows.values
    finite = np.where(np.isfinite(z), z, np.nan)
    text = np.where(np.isfinite(z), np.char.mod("%.3f", np.nan_to_num(z)), "−∞")
    written = z.size <= TEXT_CELLS  # beyond, numbers could not be read in their cells
    heat = go.Heatmap(
        z=finite,
        x=x,
        y=y,
        text=text,
        texttemplate="%{text}" if written else None,
        colorscale=WEIGHTS if step == "weights" else SIGNED,
        zmid=None if step == "weights" else 0.0,
        hovertemplate="%{y}<br>%{x}<br>%{text}<extra></extra>",
        xgap=cell_gap(len(x)),
        ygap=cell_gap(len(y)),
    )
    title = STEP_TITLES[step]
    layout = {  # margins estimated before the first draw (viz/shared/margins.py), automargin behind
        "title": {"text": title, "automargin": True, "yref": "paper", "pad": {"b": 8}},
        "xaxis": {"type": "category", "automargin": True, **cols.ticks},
        "yaxis": {"type": "category", "autorange": "reversed", "title": {"text": "query"},
                  "automargin": True, **rows.ticks},
        "margin": grid_margins(title, drawn_labels(cols), drawn_labels(rows)),
    }  # fmt: skip
    return go.Figure(heat, layout=layout)


def strongest_key(weights: np.ndarray, query: int) -> int:
    """The key position one query row gives the most weight (the answer to a prediction)."""
    row = np.asarray(weights)[query]
    return int(np.argmax(row))


def largest_difference(steps: AttentionSteps, recorded: np.ndarray) -> float:
    """How far the recomputed softmax is from the (T_q, T_k) weights the model recorded."""
    return float(np.abs(steps.weights - np.asarray(recorded, dtype=np.float64)).max())


def furthest_allowed(mask: np.ndarray, query: int) -> int:
    """The last key position a query may attend to under a (T_q, T_k) mask (-1 if none)."""
    allowed = np.flatnonzero(np.asarray(mask, dtype=bool)[query])
    return int(allowed[-1]) if allowed.size else -1
