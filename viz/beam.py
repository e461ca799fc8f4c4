"""Beam search seen as a tree, and the candidates a live beam weighed at one step."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnlens.record.decode import BeamStep, DecodeRun
from attnlens.viz.labels import token_text

STATUS_COLOURS = {"alive": "rgb(31,119,180)", "finished": "rgb(44,160,44)", "pruned": "#c0c0c0"}
CHOSEN = "crimson"


def chosen_path(run: DecodeRun) -> list[BeamStep]:
    """The beams the best hypothesis went through, step 0 first."""
    best = run.best
    return run.path(best.step, best.beam)


def beam_tree(run: DecodeRun) -> go.Figure:
    """Nodes = tokens at (step, beam) with their scores; the chosen path in red, pruned greyed.

    Each node's customdata is [step, beam], so a click identifies it.
    """
    chosen = {(t, b.beam) for t, b in enumerate(chosen_path(run))}
    traces = [_edges(run, chosen, on_path) for on_path in (False, True)]
    for status in STATUS_COLOURS:
        traces.append(_nodes(run, status, chosen))
    fig = go.Figure(traces)
    best = run.best
    fig.update_layout(
        title=f"{run.strategy} · {len(run.steps)} steps · best score {best.score:.3f}"
        f" · output “{token_text(best.text)}”",
        xaxis={"title": "step", "dtick": 1},
        yaxis={"title": "beam (alive first, then finished, then pruned)", "autorange": "reversed"},
        plot_bgcolor="white",
        legend={"title": "status"},
    )
    return fig


def _edges(run: DecodeRun, chosen: set[tuple[int, int]], on_path: bool) -> go.Scatter:
    """Lines from each beam's parent at the previous step; the chosen path's drawn on top."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for record in run.steps[1:]:
        t = record.step
        for b in record.beams:
            if b.parent is not None and ((t, b.beam) in chosen) == on_path:
                xs += [t - 1, t, None]
                ys += [b.parent, b.beam, None]
    line = {"color": CHOSEN, "width": 3} if on_path else {"color": "#bbbbbb", "width": 1}
    name = "chosen path" if on_path else "extends"
    return go.Scatter(x=xs, y=ys, mode="lines", line=line, hoverinfo="skip", name=name)


def _nodes(run: DecodeRun, status: str, chosen: set[tuple[int, int]]) -> go.Scatter:
    cells = [(r.step, b) for r in run.steps for b in r.beams if b.status == status]
    on = [(t, b.beam) in chosen for t, b in cells]
    hover = [
        f"step {t} · beam {b.beam} · {status}<br>token {token_text(b.token)}"
        f"<br>log p {b.logprob:.4f} · score {b.score:.4f}"
        + ("" if b.parent is None else f"<br>extends beam {b.parent} of step {t - 1}")
        for t, b in cells
    ]
    return go.Scatter(
        x=[t for t, _ in cells],
        y=[b.beam for _, b in cells],
        mode="markers+text",
        text=[token_text(b.token) for _, b in cells],
        textposition="top center",
        customdata=np.array([[t, b.beam] for t, b in cells], dtype=int).reshape(-1, 2),
        hovertext=hover,
        hoverinfo="text",
        marker={
            "size": 14,
            "color": STATUS_COLOURS[status],
            "line": {"color": [CHOSEN if c else "white" for c in on], "width": 3},
        },
        name=status,
    )


def candidate_bars(run: DecodeRun, step: int, row: int | None = None) -> go.Figure:
    """The most probable next tokens of one live beam at a step (default: the chosen path's)."""
    if not 0 <= step < len(run.steps):
        raise ValueError(f"step {step} is outside 0..{len(run.steps) - 1} ({len(run.steps)} steps)")
    path = chosen_path(run)
    taken = path[step] if step < len(path) else None
    if row is None:
        row = 0 if taken is None or taken.parent is None else taken.parent
    rows = run.steps[step].candidates
    if not 0 <= row < len(rows):
        raise ValueError(f"beam {row} is outside 0..{len(rows) - 1} (live beams at step {step})")
    cands = rows[row]
    labels = [f"{i} · {token_text(c.token)}" for i, c in enumerate(cands)]
    chosen_token = taken.token if taken is not None and (taken.parent or 0) == row else None
    colours = [CHOSEN if c.token == chosen_token else "rgb(31,119,180)" for c in cands]
    fig = go.Figure(
        go.Bar(
            x=[c.prob for c in cands],
            y=labels,
            orientation="h",
            marker={"color": colours},
            hovertemplate="%{y}<br>probability %{x:.5f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"step {step} · candidates of live beam {row}"
        + (" (red: chosen)" if chosen_token else ""),
        xaxis={"title": "probability", "range": [0, 1]},
        yaxis={"type": "category", "autorange": "reversed"},
        plot_bgcolor="white",
    )
    return fig
