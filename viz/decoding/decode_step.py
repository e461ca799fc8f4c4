"""One decoding step seen from the app: the path so far, candidates, attention, beam tree."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import unescape
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.decode import DecodeRun
from attnlens.record.norms import NOT_RECORDED, Measure, check_measure
from attnlens.viz.decoding.beam import (
    CANDIDATE,
    CHOSEN,
    Node,
    candidates_of,
    followed,
    followed_row,
)
from attnlens.viz.shared.labels import positions_axis, visible
from attnlens.viz.shared.palette import PLOTLY_BLUE
from attnlens.viz.shared.style import panel_title

PAYLOAD_CHARS = 600_000  # of a run's steps sent to the page at once, at most (steps_data)
WEIGHT = PLOTLY_BLUE  # a step's attention bars, as step_attention's
MEASURED = {"weight": "weights αᵢⱼ", "norm": "norms αᵢⱼ‖f(xⱼ)‖, what each key carried"}
AXIS = {"weight": "weight", "norm": "α‖f(x)‖"}  # a bar's axis and tip


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


@dataclass(frozen=True)
class Panel:
    """One bar panel of a step's attention: the weights the new position gave each key."""

    title: str
    keys: list[str]  # every key named (hover)
    tick_at: list[int]  # the keys labelled on the axis: every one when they fit, else every k-th
    ticks: list[str]  # their labels, the readable form
    weights: list[float]
    top: float = 1.0  # the weight the bars' scale ends at (scale_top)


@dataclass(frozen=True)
class StepAttention:
    """What the position a step predicts from attends to, on one live row: cross-attention on
    the source (encoder-decoder models) and decoder self-attention, one head's; the title as
    lines (the figure joins them with <br>)."""

    title: list[str]
    panels: list[Panel]


def attention_of(
    run: DecodeRun,
    step: int,
    layer: int,
    head: int,
    row: int | None = None,
    measure: Measure = "weight",
) -> StepAttention:
    """Cross-attention and decoder self-attention of the position the step predicts from, on
    one live row (default: the one the output's path extends), as weights αᵢⱼ or (norm)
    αᵢⱼ ‖f_h(xⱼ)‖, what each key carried to the head (record/norms.py)."""
    check_step(run, step)
    check_measure(measure)
    if measure == "norm" and not run.has_norms:
        raise ValueError(f"this run holds no norms: {run.norms_missing or NOT_RECORDED}")
    row = (followed_row(run, step) or 0) if row is None else row
    record = run.steps[step]
    if not 0 <= row < len(record.candidates):
        raise ValueError(f"beam {row} is outside 0..{len(record.candidates) - 1} (live beams)")
    cross, own = record.measured("cross", measure), record.measured("decoder_self", measure)
    named = [] if cross is None else [("cross-attention → source", cross, run.src_tokens)]
    assert own is not None, "every step has decoder self-attention"
    named.append(("decoder self-attention", own, run.keys(step, row)))
    panels = []
    for title, att, keys in named:
        _check_index(att.shape[0], layer, "layer")
        _check_index(att.shape[1], head, "head")
        axis = positions_axis(keys)
        where = {key: i for i, key in enumerate(axis.values)}
        panels.append(Panel(
            title=title,
            keys=axis.values,
            tick_at=[where[key] for key in axis.ticks.get("tickvals", axis.values)],
            ticks=list(axis.ticks.get("ticktext", axis.values)),
            weights=[float(w) for w in att[layer, head, row]],
            top=scale_top(att[layer, head, row]),
        ))  # fmt: skip
    lines = [f"step {step}: what the new position attends to (live beam {row})"]
    return StepAttention(lines + [f"{MEASURED[measure]} · layer {layer} · head {head}"], panels)


TOPS = (1.0, 0.5, 0.2, 0.1)  # a scale's top is one of these times a power of ten


def scale_top(weights: np.ndarray) -> float:
    """Where a panel's weight axis ends: 1, unless its largest weight is at most a half, then
    the round number (…, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5) just above it. Past a few hundred
    keys every weight of a spread head is a few thousandths: on a 0..1 axis it read blank.
    Above 1 (a norm measure's αᵢⱼ ‖f_h(xⱼ)‖), the round number (2, 5, 10, 20, …) at or above it."""
    most = float(np.max(weights, initial=0.0))
    if not most > 0:
        return 1.0
    if most > 1:
        return next(
            float(f"{base}e{power}") for power in range(0, 40) for base in (1, 2, 5)
            if float(f"{base}e{power}") >= most
        )  # fmt: skip
    top = 1.0
    for power in range(0, 12):
        for base in TOPS:
            at = float(f"{base}e-{power}")  # the decimal itself, not base / 10 ** power
            if at < most:
                return top
            top = at
    return top


def step_attention(
    run: DecodeRun,
    step: int,
    layer: int,
    head: int,
    row: int | None = None,
    measure: Measure = "weight",
) -> go.Figure:
    """attention_of one step as bar panels, one above the other; its title says the measure."""
    shown = attention_of(run, step, layer, head, row, measure)
    axis = AXIS[measure]
    titles = [panel.title for panel in shown.panels]
    fig = make_subplots(rows=len(titles), cols=1, subplot_titles=titles, vertical_spacing=0.3)
    for i, panel in enumerate(shown.panels, start=1):
        every = panel.ticks == panel.keys  # each key labelled by its own name
        ticks = {} if every else {
            "tickmode": "array", "tickvals": [panel.keys[i] for i in panel.tick_at],
            "ticktext": panel.ticks,
        }  # fmt: skip
        fig.add_trace(_bar(np.asarray(panel.weights), panel.keys, axis), row=i, col=1)
        fig.update_xaxes(type="category", automargin=True, row=i, col=1, **ticks)
        fig.update_yaxes(range=[0, panel.top], title=axis, automargin=True, row=i, col=1)
    fig.update_layout(panel_title("<br>".join(shown.title)))
    fig.update_layout(showlegend=False, margin={"l": 10, "r": 10, "b": 10})
    return fig


def _bar(weights: np.ndarray, keys: list[str], axis: str = "weight") -> go.Bar:
    return go.Bar(
        x=keys,
        y=weights.astype(np.float64),
        hovertemplate=f"key %{{x}}<br>{axis} %{{y:.4f}}<extra></extra>",
    )


def _check_index(n: int, value: int, name: str) -> None:
    if not 0 <= value < n:
        raise ValueError(f"{name} {value} is outside 0..{n - 1} ({n} {name}s)")


def up_to_step(tree: go.Figure, step: int, window: int | None = None) -> go.Figure:
    """A beam tree (viz.beam_tree) cut at `step`: no edge into a later step (the path ahead is
    not given away), later nodes off-screen, the step marked; with a `window`, only that many
    steps up to `step` in view (viz.beam.steps_that_fit: every node keeps its label; the
    earlier steps are a drag to the left away)."""
    traces = [trace.to_plotly_json() for trace in tree.data]
    for spec in traces:
        if spec.get("mode") == "lines":  # edges as (x0, x1, None) triples: drop later ones
            xs, ys = list(spec.get("x") or ()), list(spec.get("y") or ())
            kept = [i for i in range(0, len(xs), 3) if xs[i + 1] <= step]
            spec["x"] = [v for i in kept for v in xs[i : i + 3]]
            spec["y"] = [v for i in kept for v in ys[i : i + 3]]
    fig = go.Figure(data=traces, layout=tree.layout)
    first = 0 if window is None else max(0, step - window + 1)
    fig.update_xaxes(range=[first - 0.5, step + 0.5])
    if first:
        fig.update_xaxes(title_text=f"step (steps {first}–{step}; drag right for the earlier)")
    # the step as a band behind its column: a line through it struck its nodes' labels out
    fig.add_vrect(x0=step - 0.5, x1=step + 0.5, fillcolor="#888", opacity=0.15, line_width=0,
                  layer="below")  # fmt: skip
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
    """Position by position, the output token before and after a what-if, and whether it moved;
    a position one output does not reach is missing (shown "–", as every missing value; an
    empty cell read as a blank token)."""
    a: list[str | None] = list(before.output_tokens)
    b: list[str | None] = list(after.output_tokens)
    n = max(len(a), len(b))
    a += [None] * (n - len(a))
    b += [None] * (n - len(b))
    return pd.DataFrame(
        {
            "position": range(n),
            "before": a,
            "after": b,
            "changed": [x != y for x, y in zip(a, b, strict=True)],
        }
    )


def steps_data(
    run: DecodeRun,
    layer: int,
    head: int,
    node: Node | None = None,
    around: int = 0,
    budget: int = PAYLOAD_CHARS,
    measure: Measure = "weight",
) -> dict[str, Any]:
    """The steps of the followed path as the browser draws them (app/web/decode/step_view.py): each
    one's tokens so far, the candidates_of its live row and one head's attention_of it, or a
    note once the followed hypothesis has ended; the same numbers and titles as
    candidate_bars and step_attention, rounded for the page (probabilities to 5 decimals,
    weights to 4), and the labels as plain text (the figures' are escaped for Plotly, which
    reads markup; the page sets them as text). measure: the bars' weights, or (norm) αᵢⱼ ‖f_h(xⱼ)‖.

    Every step when their JSON fits in `budget` characters; else the steps nearest `around`
    that fit, the others None (the page asks for one when it gets there). A run's steps grow
    with its length squared (each step's keys and tokens so far): a Hugging Face model writing
    1,000 tokens would send some 10 MB."""
    n = len(run.steps)
    check_step(run, around)
    steps: list[dict[str, Any] | None] = [None] * n
    used = 0
    for step in _outward(around, n):
        entry = _step_entry(run, step, layer, head, node, measure)
        size = len(json.dumps(entry, ensure_ascii=False))
        if used and used + size > budget:
            break
        steps[step], used = entry, used + size
    return {"steps": steps, "colours": {"candidate": CANDIDATE, "taken": CHOSEN, "weight": WEIGHT}}


def _stops(run: DecodeRun) -> str:
    """When the run's search stops, in words (the note of a hypothesis that ended early)."""
    if run.strategy != "beam":
        return "it stops when its hypothesis ends, or at the maximum length"
    k = run.params.get("beam_size")
    return (
        f"beam search stops once {k} hypotheses (the beam size) have finished and no live "
        "beam can still rank among them, or at the maximum length; the output can be settled "
        "before that"
    )


def _outward(around: int, n: int) -> list[int]:
    """0..n-1 nearest `around` first: around, around + 1, around - 1, around + 2, …"""
    return sorted(range(n), key=lambda step: (abs(step - around), step < around))


def _step_entry(
    run: DecodeRun, step: int, layer: int, head: int, node: Node | None, measure: Measure
) -> dict[str, Any]:
    row = followed_row(run, step, node)
    entry: dict[str, Any] = {"tokens": " ".join(tokens_so_far(run, step, node)), "note": ""}
    if row is None:
        path = followed(run, step, node)
        how = "finished" if path[-1].status == "finished" else "was cut off"
        entry["note"] = (
            f"This hypothesis {how} at step {len(path) - 1}. The search went on to step "
            f"{len(run.steps) - 1}: {_stops(run)}. Click a node of a later step to follow "
            "a beam there."
        )
        return entry
    bars = candidates_of(run, step, row, node)
    att = attention_of(run, step, layer, head, row, measure)
    entry["candidates"] = {
        "title": "\n".join(bars.title),
        "labels": [unescape(label) for label in bars.labels],
        "probs": [round(p, 5) for p in bars.probs],
        "shown": [f"{p:.4f}" for p in bars.probs],  # as the table (one rounding, not two)
        "taken": bars.taken,
    }
    entry["attention"] = {
        "title": "\n".join(att.title),
        "axis": AXIS[measure],
        "panels": [
            {"title": p.title, "keys": [unescape(k) for k in p.keys], "tick_at": p.tick_at,
             "ticks": [unescape(t) for t in p.ticks],
             "weights": [float(f"{w:.4g}") for w in p.weights], "top": p.top}
            for p in att.panels
        ],
    }  # fmt: skip
    return entry
