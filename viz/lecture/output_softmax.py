"""The output softmax (§3.4) and how greedy, beam search and sampling choose from it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.decode import DecodeRun
from attnlens.viz.decoding.beam import followed, followed_row
from attnlens.viz.decoding.decode_step import check_step
from attnlens.viz.shared.labels import token_text, wrapped
from attnlens.viz.shared.palette import BLUE, FADED, PALE_BLUE, RED

CHOSEN, OTHER, DROPPED = RED, BLUE, FADED


def next_token_bars(
    run: DecodeRun, step: int, hide: bool = False, limit: int | None = None
) -> go.Figure:
    """The probabilities the linear layer and softmax give the next token at `step`: the most
    likely ones, the rest of the vocabulary as one bar, the token the run took in red.
    hide: the same tokens in alphabetical order with their probabilities hidden (to predict);
    limit: only the `limit` most likely."""
    check_step(run, step)
    cands = run.steps[step].candidates[followed_row(run, step) or 0][:limit]  # greedy: one row
    taken = followed(run, step)[step].token
    so_far = "".join(token_text(b.token) + " " for b in followed(run, step)[:step]).strip()
    if hide:
        return _hidden_bars(sorted(c.token for c in cands), step, so_far)
    rest = max(0.0, 1.0 - sum(c.prob for c in cands))
    labels = [token_text(c.token) for c in cands] + [REST]
    probs = [c.prob for c in cands] + [rest]
    colours = [CHOSEN if c.token == taken else OTHER for c in cands] + [DROPPED]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=labels,
            orientation="h",
            marker_color=colours,
            text=[f"{p:.2f}" for p in probs],
            textposition="outside",
            hovertemplate="%{y}<br>p = %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"step {step}: p(next token | {so_far or 'the start'}) · {run.strategy} took "
        f"{token_text(taken)}",
        xaxis={"title": "probability", "range": [0, 1.1]},
        yaxis={"type": "category", "autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
    )
    return fig


def _hidden_bars(tokens: list[str], step: int, so_far: str) -> go.Figure:
    labels = [token_text(t) for t in tokens]
    fig = go.Figure(
        go.Bar(
            x=[1.0] * len(tokens),
            y=labels,
            orientation="h",
            marker_color=DROPPED,
            text=["?"] * len(tokens),
            textposition="inside",
            hoverinfo="skip",
        )
    )
    fig.update_layout(
        title=f"step {step}: p(next token | {so_far or 'the start'}) · which is largest?",
        xaxis={"visible": False, "range": [0, 1.1]},
        yaxis={"type": "category", "autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
    )
    return fig


REST = "(every other token)"
# where the few tokens recorded cannot give what sampling draws from (see reshape)
NOT_DRAWN = ": what it draws from needs every token's p (the model's p only)"
NBSP = "\u00a0"  # keeps "(Σ log p)" on one line of a wrapped title
STRATEGY_TICK_ANGLE = -35  # degrees: the sampled tokens' labels under their bars
PANEL_TITLE_CHARS = 18  # a panel title's lines: 24 px projector text, titles ~230 px apart


@dataclass(frozen=True)
class Reshaped:
    """The next-token distribution over a few tokens and the rest of the vocabulary (one bar,
    last), as the model gives it (before) and as sampling draws from it (after), and which
    survive; after is None where those few cannot decide it (see reshape)."""

    tokens: tuple[str, ...]
    before: tuple[float, ...]
    after: tuple[float, ...] | None  # 0 for a dropped token; sums to 1
    kept: tuple[bool, ...]


def reshape(
    tokens: Sequence[str],
    probs: Sequence[float],
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Reshaped:
    """What sampling draws from (softmax(log p / T), then top-k, then top-p, as
    model.decoding.sampling does over the whole vocabulary), given only the most probable
    `tokens` and their model probabilities `probs`, the rest of the vocabulary as one bar.

    Exact where these tokens decide it: a top-k among them (nothing else survives), or T = 1
    without top-k (the rest keeps its share) and no top-p reaching past them. Otherwise, say
    T = 1.5 with no top-k, the rest's share needs every token's probability: after is None,
    rather than these tokens renormalised among themselves (which made T = 1 look reshaped).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be above 0, got {temperature}")
    p = np.asarray(probs, np.float64)
    rest = max(0.0, 1.0 - float(p.sum()))
    order = np.argsort(-p, kind="stable")
    keep = np.ones_like(p, bool)
    shown, before = (*tokens, REST), (*p.tolist(), rest)
    unknown = Reshaped(shown, before, None, (True,) * len(shown))
    if top_k is not None and top_k <= len(p):
        keep[order[top_k:]] = False
        logits = np.log(np.maximum(p, 1e-300)) / temperature
        z = np.where(keep, np.exp(logits - logits[keep].max()), 0.0)
        z /= z.sum()
        rest_kept = False
    elif temperature == 1.0 and top_k is None:
        z, rest_kept = p.copy(), rest > 0
    else:
        return unknown
    if top_p is not None and top_p < 1.0:
        above = np.cumsum(z[order]) - z[order]  # probability ranked strictly above each
        keep[order[above >= top_p]] = False
        if rest_kept and float(z.sum()) < top_p:  # some of the rest is kept: which, unknown
            return unknown
        rest_kept = False
    after = np.where(keep, z, 0.0)
    tail = rest if rest_kept else 0.0
    total = float(after.sum()) + tail
    return Reshaped(
        shown,
        before,
        (*(after / total).tolist(), tail / total),
        (*keep.tolist(), rest_kept),
    )


def strategies_view(
    runs: Mapping[str, DecodeRun], step: int, reshaped: Reshaped, settings: str
) -> go.Figure:
    """Left: each strategy's output and score (the sum of log p; higher is likelier). Right:
    the step's distribution as the model gives it and as sampling reshapes it."""
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.45, 0.55],
        horizontal_spacing=0.2,
        subplot_titles=(  # wrapped: on the Lecture's column at 1400 px (the legend beside the
            # panels) the panels' centres are ~230 px apart, and one title ran over the other
            wrapped(f"output · score{NBSP}(Σ{NBSP}log{NBSP}p)", PANEL_TITLE_CHARS),  # 2 lines
            wrapped(
                f"step {step}, sampling with {settings}"
                + ("" if reshaped.after is not None else NOT_DRAWN),
                PANEL_TITLE_CHARS,
            ),
        ),
    )
    names = list(runs)
    fig.add_trace(
        go.Bar(
            x=[runs[n].score for n in names],
            y=names,
            orientation="h",
            marker_color=OTHER,
            text=[token_text(runs[n].output_text) for n in names],
            textposition="inside",
            insidetextanchor="start",
            name="score",
            showlegend=False,  # its bars are named by the axis: greedy, beam, sample
            hovertemplate="%{y}<br>score %{x:.4f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    labels = [t if t == REST else token_text(t) for t in reshaped.tokens]
    fig.add_trace(
        go.Bar(x=labels, y=list(reshaped.before), name="model: p", marker_color=PALE_BLUE),
        row=1,
        col=2,
    )
    if reshaped.after is not None:
        fig.add_trace(
            go.Bar(
                x=labels,
                y=list(reshaped.after),
                name="sampled from",
                marker_color=[CHOSEN if k else DROPPED for k in reshaped.kept],
            ),
            row=1,
            col=2,
        )
    fig.update_yaxes(type="category", autorange="reversed", row=1, col=1)
    # short: the panel's title says "score (Σ log p)", and a longer one ran under the slanted
    # tokens of the panel beside it on the lecture's 1,400 px screen
    fig.update_xaxes(title="Σ log p", row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], title="probability", row=1, col=2)
    # a fixed slant: left to Plotly, projector-sized labels stood upright and took half the
    # figure's height from the bars (the lecture's sampling slide, "(every other token)")
    fig.update_xaxes(type="category", tickangle=STRATEGY_TICK_ANGLE, row=1, col=2)
    fig.update_layout(
        barmode="group",
        title={
            "text": "greedy, beam search and sampling on this input",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 12},
        },
        # at the right, where Plotly makes room for it: under the plots, grown to projector
        # text, it lay over the score axis's title
        legend={"x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
        margin={"l": 10, "r": 10, "t": 120, "b": 10},  # the title, two-line panel titles
    )
    return fig
