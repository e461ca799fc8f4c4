"""Sentence pairs (BertViz's sentence A / sentence B view): the encoder's attention within and
between the two texts of a pair, read off the record's src_segments."""

from __future__ import annotations

from typing import Literal

import numpy as np
import plotly.graph_objects as go

from attnlens.record.picking import allowed_of, attention_of, check_head, check_layer
from attnlens.record.trace import Trace
from attnlens.viz.heads.heatmap import grid_layout, grid_title, head_heatmap, weight_layer
from attnlens.viz.shared.labels import hover_labels, position_labels, token_axis
from attnlens.viz.shared.palette import MARK

Block = Literal["all", "A→A", "A→B", "B→A", "B→B"]
BLOCKS: tuple[Block, ...] = ("all", "A→A", "A→B", "B→A", "B→B")
BOUNDARY_COLOUR = MARK


def sentence_b_start(trace: Trace) -> int:
    """The first source position of the second text, or a ValueError without a pair."""
    segments = trace.src_segments
    if not segments or 1 not in segments:
        raise ValueError(f"{trace.model.name}'s record holds one text, not a sentence pair")
    return segments.index(1)


def pair_heatmap(trace: Trace, layer: int, head: int, block: Block = "all") -> go.Figure:
    """Encoder self-attention of one head over a sentence pair: the whole grid split into
    its four blocks (A→A, A→B, B→A, B→B) at the boundary, or one block alone, its rows the
    querying sentence's tokens and its columns the other's."""
    start = sentence_b_start(trace)
    if block not in BLOCKS:
        raise ValueError(f"block must be one of {', '.join(BLOCKS)}, got {block!r}")
    if block == "all":
        return _with_boundary(head_heatmap(trace, "encoder_self", layer, head), start, trace)
    weights = attention_of(trace, "encoder_self")
    check_layer(weights, layer)
    check_head(weights, head)
    S = weights.shape[-1]
    parts = {"A": np.arange(0, start), "B": np.arange(start, S)}
    rows, columns = parts[block[0]], parts[block[-1]]
    shown = trace.shown("encoder_self")[0]
    values, texts = hover_labels(trace.src_tokens, shown), position_labels(shown)
    y_axis = token_axis([values[i] for i in rows], [texts[i] for i in rows])
    x_axis = token_axis([values[j] for j in columns], [texts[j] for j in columns])
    w = weights[layer, head][np.ix_(rows, columns)]  # (rows, columns)
    allowed = allowed_of(trace, "encoder_self")[np.ix_(rows, columns)]
    fig = go.Figure([weight_layer(w, allowed, x_axis.values, y_axis.values)])
    title = f"sentence {block[0]} → sentence {block[-1]} · layer {layer} · head {head}"
    fig.update_layout(grid_layout(title, x_axis, y_axis))
    return fig


def _with_boundary(fig: go.Figure, start: int, trace: Trace) -> go.Figure:
    """Lines between the two texts on both axes, and each block named."""
    S = len(trace.src_tokens)
    edge = start - 0.5  # category axes put position i at i
    line = {"color": BOUNDARY_COLOUR, "width": 2, "dash": "dash"}
    fig.add_shape(type="line", x0=edge, x1=edge, y0=-0.5, y1=S - 0.5, line=line)
    fig.add_shape(type="line", x0=-0.5, x1=S - 0.5, y0=edge, y1=edge, line=line)
    middle = {"A": (start - 1) / 2, "B": (start + S - 1) / 2}
    for q, k in ("AA", "AB", "BA", "BB"):
        fig.add_annotation(
            x=middle[k], y=middle[q], text=f"{q}→{k}", showarrow=False, opacity=0.45,
            font={"size": 16, "color": BOUNDARY_COLOUR},
        )  # fmt: skip
    note = f"sentence A: positions 0–{start - 1} · sentence B: {start}–{S - 1}"
    title, top = grid_title(fig.layout.title.text or "", note)
    fig.update_layout(title=title, margin_t=top)
    return fig
