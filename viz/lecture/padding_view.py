"""Padding (§3.2.3): sentences of a batch share one length, and no query may attend to a pad."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.viz.lecture.panels import mask_panel
from attnlens.viz.shared.labels import position_labels

PAD = "<pad>"


def padding_masks(lengths: Sequence[int]) -> np.ndarray:
    """(B, P, P) key-padding masks of a batch padded to P = the longest length; True = may
    attend. A pad position may attend to real keys but no query attends to a pad."""
    if not lengths or min(lengths) < 1:
        raise ValueError(f"every sentence needs at least one token, got lengths {list(lengths)}")
    P = max(lengths)
    real = np.arange(P)[None, :] < np.asarray(lengths)[:, None]  # (B, P)
    return np.broadcast_to(real[:, None, :], (len(lengths), P, P)).copy()


def padding_view(batch: Sequence[Sequence[str]], names: Sequence[str] | None = None) -> go.Figure:
    """One panel per sentence of a batch, each padded with <pad> to the longest: the columns of
    its pads are dark in every row."""
    lengths = [len(tokens) for tokens in batch]
    masks = padding_masks(lengths)
    P = masks.shape[1]
    names = list(names) if names is not None else [f"sentence {i + 1}" for i in range(len(batch))]
    titles = [f"{name}: {n} tokens + {P - n} pad" for name, n in zip(names, lengths, strict=True)]
    fig = make_subplots(rows=1, cols=len(batch), horizontal_spacing=0.08, subplot_titles=titles)
    for col, (tokens, mask) in enumerate(zip(batch, masks, strict=True), start=1):
        labels = position_labels([*tokens, *[PAD] * (P - len(tokens))])
        panel = mask_panel(mask.astype(np.int8), labels, labels, f"batch row {col - 1}", (2, 2))
        fig.add_trace(panel, row=1, col=col)
    fig.update_xaxes(type="category", side="bottom", tickangle=-60)
    # Plotly draws a y axis's labels beside its panel: left of a panel with a neighbour there,
    # they sat over that neighbour's cells (the lecture's slide 9). The first panel keeps them
    # on its left, the last has them on its right, and a panel between names its queries by
    # its columns only (a sentence's keys are its queries)
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=False)
    fig.update_yaxes(showticklabels=True, row=1, col=1)
    if len(batch) > 1:
        fig.update_yaxes(showticklabels=True, side="right", row=1, col=len(batch))
    fig.update_layout(
        title=f"a batch of {len(batch)}, padded to {P} positions: no query "
        "attends to a pad (dark columns)",
        margin={"l": 10, "r": 10, "t": 100, "b": 10},  # the title and the panel titles
    )
    return fig
