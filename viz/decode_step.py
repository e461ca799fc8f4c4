"""One decoding step seen from the app: the path so far, candidates, attention, beam tree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.decode import DecodeRun
from attnlens.viz.beam import Node, followed, followed_row
from attnlens.viz.labels import positions_axis, visible
from attnlens.viz.style import panel_title


def check_step(run: DecodeRun, step: int) -> None:
    """A ValueError unless the run has this step."""
    if not 0 <= step < len(run.steps):
        raise ValueError(f"step {step} is outside 0..{len(run.steps) - 1} ({len(run.steps)} steps)")


def tokens_so_far(run: DecodeRun, step: int, node: Node | None = None) -> list[str]:
    """The followed path's tokens up to and including the one chosen at `step` (node: the
    beam followed, default the output's), each as a reader sees it (a space as '␣')."""
    return [visible(b.token) for b in followed(run, step, node)]


def candidates_frame(run: DecodeRun, step: int, row: int | None = None) -> pd.DataFrame:
    """The most probable next tokens of one live row at a step (default: the output's path's),
    ranked from 1."""
    check_step(run, step)
    row = (followed_row(run, step) or 0) if row is None else row
    rows = run.steps[step].candidates[row]
    return pd.DataFrame(
        {
            "rank": range(1, len(rows) + 1),
            "token": [c.token for c in rows],
            "probability": [c.prob for c in rows],
        }
    )


def step_attention(
    run: DecodeRun, step: int, layer: int, head: int, row: int | None = None
) -> go.Figure:
    """Cross-attention and decoder self-attention of the position the step predicts from, on
    one live row (default: the one the output's path extends)."""
    check_step(run, step)
    row = (followed_row(run, step) or 0) if row is None else row
    record = run.steps[step]
    if not 0 <= row < len(record.candidates):
        raise ValueError(f"beam {row} is outside 0..{len(record.candidates) - 1} (live beams)")
    has_cross = record.cross_attention is not None
    titles = (["cross-attention → source"] if has_cross else []) + ["decoder self-attention"]
    fig = make_subplots(rows=len(titles), cols=1, subplot_titles=titles, vertical_spacing=0.3)
    panels = []
    if record.cross_attention is not None:
        panels.append((record.cross_attention, run.src_tokens))
    panels.append((record.decoder_self_attention, run.keys(step, row)))
    for i, (att, keys) in enumerate(panels, start=1):
        _check_index(att.shape[0], layer, "layer")
        _check_index(att.shape[1], head, "head")
        weights = att[layer, head, row]  # (K,)
        axis = positions_axis(keys)
        fig.add_trace(_bar(weights, axis.values), row=i, col=1)
        fig.update_xaxes(type="category", automargin=True, row=i, col=1, **axis.ticks)
        fig.update_yaxes(range=[0, 1], title="weight", automargin=True, row=i, col=1)
    title = f"step {step}: what the new position attends to (live beam {row})<br>"
    fig.update_layout(panel_title(title + f"layer {layer} · head {head}"))
    fig.update_layout(showlegend=False, margin={"l": 10, "r": 10, "b": 10})
    return fig


def _bar(weights: np.ndarray, keys: list[str]) -> go.Bar:
    return go.Bar(
        x=keys,
        y=weights.astype(np.float64),
        hovertemplate="key %{x}<br>weight %{y:.4f}<extra></extra>",
    )


def _check_index(n: int, value: int, name: str) -> None:
    if not 0 <= value < n:
        raise ValueError(f"{name} {value} is outside 0..{n - 1} ({n} {name}s)")


def up_to_step(tree: go.Figure, step: int) -> go.Figure:
    """A beam tree (viz.beam_tree) cut at `step`: no edge into a later step (the path ahead is
    not given away), later nodes off-screen, the step marked."""
    traces = [trace.to_plotly_json() for trace in tree.data]
    for spec in traces:
        if spec.get("mode") == "lines":  # edges as (x0, x1, None) triples: drop later ones
            xs, ys = list(spec.get("x") or ()), list(spec.get("y") or ())
            kept = [i for i in range(0, len(xs), 3) if xs[i + 1] <= step]
            spec["x"] = [v for i in kept for v in xs[i : i + 3]]
            spec["y"] = [v for i in kept for v in ys[i : i + 3]]
    fig = go.Figure(data=traces, layout=tree.layout)
    fig.update_xaxes(range=[-0.5, step + 0.5])
    fig.add_vline(x=step, line_dash="dot", line_color="#888")
    title = fig.layout.title.text or "beam tree"
    fig.update_layout(title=f"{title}<br>up to step {step}")
    return fig


def runs_table(runs: dict[str, DecodeRun]) -> pd.DataFrame:
    """Runs side by side: output, score (sum of log-probabilities), length, finished."""
    return pd.DataFrame(
        [
            {
                "run": name,
                "output": run.output_text,
                "score": run.score,
                "tokens": len(run.output_tokens),
                "finished": run.best.finished,
            }
            for name, run in runs.items()
        ]
    )


def output_change(before: DecodeRun, after: DecodeRun) -> pd.DataFrame:
    """Position by position, the output token before and after a what-if, and whether it moved."""
    a, b = list(before.output_tokens), list(after.output_tokens)
    n = max(len(a), len(b))
    a += [""] * (n - len(a))
    b += [""] * (n - len(b))
    return pd.DataFrame(
        {
            "position": range(n),
            "before": a,
            "after": b,
            "changed": [x != y for x, y in zip(a, b, strict=True)],
        }
    )
