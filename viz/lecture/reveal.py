"""Predict, then reveal: the figures that show the answer, and how a class answered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attnlens.record.decode import DecodeRun
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.heatmap import head_heatmap
from attnlens.viz.shared.labels import escape, token_text
from attnlens.viz.shared.palette import GREEN, RED, WRONG

RIGHT, ROW = GREEN, RED


def where_reveal(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    query: int,
    answer: int,
    reference: Sequence[int] | None = None,
) -> go.Figure:
    """The head's heatmap with the asked query row outlined and the right key's cell ringed."""
    fig = head_heatmap(trace, kind, layer, head, reference)
    q_tokens, k_tokens = trace.tokens(kind)
    if not 0 <= query < len(q_tokens) or not 0 <= answer < len(k_tokens):
        raise ValueError(
            f"query {query} and key {answer} must lie in 0..{len(q_tokens) - 1} and "
            f"0..{len(k_tokens) - 1}"
        )
    fig.add_shape(
        type="rect",
        x0=-0.5,
        x1=len(k_tokens) - 0.5,
        y0=query - 0.5,
        y1=query + 0.5,
        line={"color": ROW, "width": 4},
        name="asked row",
    )
    fig.add_shape(
        type="rect",
        x0=answer - 0.45,
        x1=answer + 0.45,
        y0=query - 0.45,
        y1=query + 0.45,
        line={"color": RIGHT, "width": 5},
        name="answer",
    )
    return fig


def blank_row(fig: go.Figure, row: int, names: Sequence[str]) -> go.Figure:
    """Predict before you see: the figure with one query row of its weight heatmaps (traces
    named in `names`) left empty and outlined, so the asked answer is not on screen; a true
    source circled on that row, and the title's count of hits, go too."""
    _hide_true_source(fig, row)
    for trace in fig.data:
        if trace.type != "heatmap" or trace.name not in names or trace.z is None:
            continue
        z = np.array(trace.z, dtype=np.float64)  # (Q, K)
        if not 0 <= row < z.shape[0]:
            raise ValueError(f"row {row} is outside 0..{z.shape[0] - 1}")
        z[row] = np.nan
        trace.z = z
        if trace.text is not None:
            text = np.array(trace.text, dtype=object)
            text[row] = ""
            trace.text = text
        axes = {"xref": trace.xaxis or "x", "yref": trace.yaxis or "y"}
        fig.add_shape(type="rect", x0=-0.5, x1=z.shape[1] - 0.5, y0=row - 0.5, y1=row + 0.5,
                      line={"color": ROW, "width": 4, "dash": "dot"}, **axes)  # fmt: skip
        fig.add_annotation(x=(z.shape[1] - 1) / 2, y=row, text="?", showarrow=False,
                           font={"size": 22, "color": ROW}, **axes)  # fmt: skip
    return fig


def _hide_true_source(fig: go.Figure, row: int) -> None:
    for trace in fig.data:
        if trace.type == "scatter" and trace.name == "true source" and trace.y is not None:
            keep = [i for i in range(len(trace.y)) if i != row]
            trace.x = [trace.x[i] for i in keep]
            trace.y = [trace.y[i] for i in keep]
            fig.layout.title.subtitle.text = ""  # its count would give the hidden row away


def head_scores(scores: Sequence[float], answer: int, what: str) -> go.Figure:
    """One bar per head for a score in 0..1 (the share of rows it answers `what` for), the
    right head in green."""
    if not 0 <= answer < len(scores):
        raise ValueError(f"answer {answer} is outside 0..{len(scores) - 1}")
    labels = [f"head {h}" for h in range(len(scores))]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=list(scores),
            text=[f"{s:.0%}" for s in scores],
            textposition="outside",
            marker_color=[RIGHT if h == answer else WRONG for h in range(len(scores))],
            hovertemplate="%{x}<br>%{y:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=escape(what),
        yaxis={"range": [0, 1.15], "title": "share"},
        xaxis={"type": "category"},
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
    )
    return fig


def scores_bars(runs: Mapping[str, DecodeRun], answer: str) -> go.Figure:
    """Each run's score (Σ log p) with its output; the run named `answer` in green."""
    names = list(runs)
    fig = go.Figure(
        go.Bar(
            x=[runs[n].score for n in names],
            y=names,
            orientation="h",
            text=[f"{token_text(runs[n].output_text)}  ({runs[n].score:.3f})" for n in names],
            textposition="inside",
            insidetextanchor="start",
            marker_color=[RIGHT if n == answer else WRONG for n in names],
            hovertemplate="%{y}<br>score %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="score = sum of log-probabilities (closer to 0 is likelier)",
        yaxis={"type": "category", "autorange": "reversed"},
        xaxis={"title": "score"},
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
    )
    return fig


def class_answers(options: Sequence[str], counts: Sequence[int], answer: int) -> go.Figure:
    """How many students chose each option, the right one in green and marked as the truth."""
    if len(options) != len(counts):
        raise ValueError(f"{len(options)} options but {len(counts)} counts")
    if not 0 <= answer < len(options):
        raise ValueError(f"answer {answer} is outside 0..{len(options) - 1}")
    total = sum(counts)
    labels = [
        f"{chr(65 + i)} · {escape(o)}" + ("  ✓" if i == answer else "")
        for i, o in enumerate(options)
    ]
    fig = go.Figure(
        go.Bar(
            x=list(counts),
            y=labels,
            orientation="h",
            text=[str(c) for c in counts],
            textposition="outside",
            marker_color=[RIGHT if i == answer else WRONG for i in range(len(options))],
            hovertemplate="%{y}<br>%{x} answers<extra></extra>",
        )
    )
    right = counts[answer]
    fig.update_layout(
        title=f"the class: {right} of {total} right" if total else "the class: no answers yet",
        xaxis={
            "title": "answers",
            "range": [0, max(1, max(counts, default=0)) * 1.25],
            "dtick": 1 if max(counts, default=0) <= 10 else None,
        },
        yaxis={"type": "category", "autorange": "reversed"},
        # the title's one line: twice this on a projector, in the lecture's 300 px histogram
        # (t 80 left its plot ~50 px, and Plotly dropped every other option's name)
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig
