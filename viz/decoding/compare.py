"""Decoding runs side by side (greedy vs beam): each output token with its log-probability."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.decode import BeamStep, DecodeRun
from attnlens.viz.decoding.beam import chosen_path
from attnlens.viz.shared.labels import token_text
from attnlens.viz.shared.style import PANEL_TITLE_PX, panel_title

LABELLED_BARS = 16  # tokens a panel holds with each written on its bar; past it, axis and hover


def compare_runs(runs: Mapping[str, DecodeRun]) -> go.Figure:
    """One panel per run: bars of log p for every output token, total score in the title."""
    if not runs:
        raise ValueError("compare_runs needs at least one run")
    names = list(runs)
    titles = [
        f"{token_text(n)} · score {r.score:.3f}<br>“{token_text(_short(r.output_text))}”"
        for n, r in runs.items()
    ]
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=titles, shared_yaxes=True)
    paths = {name: chosen_path(run) for name, run in runs.items()}
    # lm's 60-token outputs wrote a token on each 6 px bar, one over the other
    labelled = max(map(len, paths.values())) <= LABELLED_BARS
    for col, name in enumerate(names, start=1):
        fig.add_trace(_bars(token_text(name), paths[name], labelled), row=1, col=col)
        fig.update_xaxes(type="category", title_text="output position", row=1, col=col)
    fig.update_yaxes(title_text="log p(token)", row=1, col=1)
    fig.update_layout(panel_title("decoding runs side by side"))
    fig.layout.title.pad.b = 2 * PANEL_TITLE_PX  # the panel titles have two lines
    fig.update_layout(showlegend=False, plot_bgcolor="white")
    return fig


def _bars(name: str, path: Sequence[BeamStep], labelled: bool) -> go.Bar:
    labels = [f"{i} · {token_text(b.token)}" for i, b in enumerate(path)]
    hover = [
        f"{name} · step {i} · beam {b.beam}<br>token {token_text(b.token)}"
        f"<br>log p {b.logprob:.4f} · score so far {b.score:.4f}"
        for i, b in enumerate(path)
    ]
    return go.Bar(
        x=labels,
        y=[b.logprob for b in path],
        name=name,
        hovertext=hover,
        hoverinfo="text",
        text=[token_text(b.token) for b in path] if labelled else None,
        textposition="outside",
        constraintext="none",  # every token at one size (Plotly shrank those wider than a bar)
        cliponaxis=False,
    )


def _short(text: str, limit: int = 20) -> str:
    """Text cut to fit a panel title, marked with '…' when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
