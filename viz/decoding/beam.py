"""Beam search seen as a tree, the path one follows through it, and the candidates a live beam
weighed at one step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from attnlens.record.decode import BeamStep, DecodeRun
from attnlens.record.errors import clipped
from attnlens.viz.decoding import beam_rows
from attnlens.viz.decoding.beam_rows import row_count, rows_of
from attnlens.viz.shared.labels import token_text
from attnlens.viz.shared.margins import BASE_FONT, text_px
from attnlens.viz.shared.palette import BLUE, FADED, GREEN, ORANGE

STATUS_COLOURS = {"alive": BLUE, "finished": GREEN, "pruned": FADED}
Node = beam_rows.Node  # (step, beam): one node of the tree
CHOSEN = "crimson"  # the path of the output
FOLLOWED = ORANGE  # the path of another beam the user follows
CANDIDATE = BLUE
OUTPUT_CHARS = 40  # of the output in the tree's title: a 96-token output ran past the figure
ROW_PX, MIN_HEIGHT, MAX_HEIGHT = 40, 320, 1300  # 16 rows (8 beams' alive and finished) at 24 px
ROW_FONTS = 2.2  # a row's height in font sizes: the label, the node under it, a gap
AROUND_PX, AROUND_FONTS = 160, 10  # the title's two lines, the legend, the step axis
SCORE_DIGITS = 2  # decimals of the cumulative score on a node: "kasa -3.21"
LABEL_GAP_PX = 20  # px between two steps' labels


def chosen_path(run: DecodeRun) -> list[BeamStep]:
    """The beams the best hypothesis went through, step 0 first."""
    return run.path(*output_node(run))


def output_node(run: DecodeRun) -> Node:
    """The node where the output (the best hypothesis) ends."""
    return run.best.step, run.best.beam


def check_node(run: DecodeRun, node: Sequence[int]) -> Node:
    """(step, beam) as ints, or a ValueError naming what the run has."""
    step, beam = (int(v) for v in node)
    if not 0 <= step < len(run.steps):
        raise ValueError(f"step {step} is outside 0..{len(run.steps) - 1} ({len(run.steps)} steps)")
    n = len(run.steps[step].beams)
    if not 0 <= beam < n:
        raise ValueError(f"beam {beam} is outside 0..{n - 1} (beams at step {step})")
    return step, beam


def extended(run: DecodeRun, node: Node) -> Node:
    """Where following a node leads: a live beam goes on through its best-scoring child that
    was kept (alive or finished) until it finishes, is cut, or the run ends."""
    step, beam = check_node(run, node)
    while step + 1 < len(run.steps) and run.steps[step].beams[beam].status == "alive":
        kids = [b for b in run.steps[step + 1].beams if b.parent == beam and b.status != "pruned"]
        if not kids:
            break
        step, beam = step + 1, max(kids, key=lambda b: b.score).beam
    return step, beam


def followed(run: DecodeRun, step: int, node: Node | None = None) -> list[BeamStep]:
    """The followed hypothesis from step 0 to `step`, shorter when it ended before `step`.
    node: the beam followed (default: where the output ends)."""
    if not 0 <= step < len(run.steps):
        raise ValueError(f"step {step} is outside 0..{len(run.steps) - 1} ({len(run.steps)} steps)")
    return run.path(*extended(run, node or output_node(run)))[: step + 1]


def followed_row(run: DecodeRun, step: int, node: Node | None = None) -> int | None:
    """The live row (previous step's alive beam) the followed path extends at `step`; None
    once the followed hypothesis has ended before it."""
    path = followed(run, step, node)
    if len(path) <= step:
        return None
    parent = path[step].parent
    return 0 if parent is None else parent


def beam_tree(run: DecodeRun, node: Node | None = None, font_px: float = BASE_FONT) -> go.Figure:
    """Kept beams (alive, finished), each labelled with its token and cumulative score (to
    SCORE_DIGITS decimals) on a row it keeps from step to step (viz/decoding/beam_rows.py: no two
    edges cross); each step's pruned continuations collapsed into one faded node in the
    bottom row; the output's path in red, and a followed beam's path (node) in orange when
    it differs. font_px: the size its text will be shown at (a projector's 24 px needs taller
    rows: a label sits above its node, below the row above).

    Each kept node's customdata is [step, beam], so a click identifies it.
    """
    chosen = [(t, b.beam) for t, b in enumerate(chosen_path(run))]
    path = (
        chosen
        if node is None
        else [(t, b.beam) for t, b in enumerate(run.path(*extended(run, node)))]
    )
    at = rows_of(run)
    rows = row_count(run)
    traces = [_edges(run, at, set(chosen) | set(path), None, "extends")]
    if path != chosen:
        traces.append(_edges(run, at, set(path), FOLLOWED, "followed beam"))
    traces.append(_edges(run, at, set(chosen), CHOSEN, "output's path"))
    traces += [_kept(run, at, status, set(chosen), set(path)) for status in ("alive", "finished")]
    traces.append(_pruned(run, rows))
    fig = go.Figure(traces)
    best, n = run.best, len(run.steps)
    fig.update_layout(
        title=f"{run.strategy} · {n} step{'' if n == 1 else 's'} · output "
        f"“{token_text(clipped(best.text, OUTPUT_CHARS))}” "
        f"(score {best.score:.{SCORE_DIGITS}f})",
        xaxis={"title": {"text": "step"}, "dtick": 1, "automargin": True},
        yaxis=_rows_axis(rows),
        plot_bgcolor="white",
        # at the foot of the figure, in rows that wrap: at the right, projector-sized entries
        # were cut off at the figure's edge ("output's pat", "pruned (cou"); above the plot
        # they ran into the title's second line
        legend={
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": 0,
            "yanchor": "bottom",
            "yref": "container",
        },
        dragmode="pan",  # a drag to the right brings earlier steps into view
        height=_height(rows, font_px),
    )
    return fig


def _height(rows: int, font_px: float) -> int:
    """Rows tall enough for a label above each node, and room for the title's two lines, the
    legend and the step axis."""
    row = max(ROW_PX, ROW_FONTS * font_px)
    around = max(AROUND_PX, AROUND_FONTS * font_px)
    return int(min(MAX_HEIGHT, max(MIN_HEIGHT, row * (rows + 1.8) + around)))


def label(b: BeamStep) -> str:
    """A kept node's label: its token and cumulative score, "kasa -3.21"."""
    return f"{token_text(b.token)} {b.score:.{SCORE_DIGITS}f}"


def label_px(run: DecodeRun, font_px: float) -> float:
    """About how wide the widest node label of the run is drawn at font_px."""
    kept = (b for r in run.steps for b in r.beams if b.status != "pruned")
    return max((text_px(label(b), font_px) for b in kept), default=0.0)


def steps_that_fit(run: DecodeRun, plot_px: float, font_px: float) -> int:
    """How many steps of the tree fit side by side in plot_px with no two labels touching
    (at least 1)."""
    column = label_px(run, font_px) + LABEL_GAP_PX
    return max(1, int(plot_px // column))


def _rows_axis(rows: int) -> dict[str, Any]:
    """A row per kept hypothesis (unlabelled: a row is not a rank); the pruned row below."""
    return {
        "title": {"text": "kept beams (each keeps its row)"},
        "tickmode": "array",
        "tickvals": [*range(rows), rows],
        "ticktext": [""] * rows + ["pruned"],
        "range": [rows + 0.6, -1.2],  # reversed: the first row on top, room above its label
        "automargin": True,
        "zeroline": False,
        "showgrid": False,
    }


def _edges(
    run: DecodeRun, at: dict[Node, int], on: set[Node], colour: str | None, name: str
) -> go.Scatter:
    """Lines from each kept beam's parent at the previous step, between their rows: every
    edge (colour None, faint) or the edges into the nodes `on` (drawn on top, thick)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for record in run.steps[1:]:
        t = record.step
        for b in record.beams:
            if b.parent is None or b.status == "pruned" or (colour and (t, b.beam) not in on):
                continue
            xs += [t - 1, t, None]
            ys += [at[(t - 1, b.parent)], at[(t, b.beam)], None]
    line = {"color": colour, "width": 3} if colour else {"color": "#aaaaaa", "width": 1}
    return go.Scatter(x=xs, y=ys, mode="lines", line=line, hoverinfo="skip", name=name)


def _kept(
    run: DecodeRun, at: dict[Node, int], status: str, chosen: set[Node], path: set[Node]
) -> go.Scatter:
    """The nodes of one status on their rows, each labelled with its token and score."""
    cells = [(r.step, b) for r in run.steps for b in r.beams if b.status == status]
    outline = [
        CHOSEN if (t, b.beam) in chosen else FOLLOWED if (t, b.beam) in path else "white"
        for t, b in cells
    ]
    hover = [
        f"step {t} · rank {b.beam} · {status}<br>token {token_text(b.token)}"
        f"<br>log p {b.logprob:.4f} · score {b.score:.4f}"
        + ("" if b.parent is None else f"<br>extends rank {b.parent} of step {t - 1}")
        + "<br>click to follow this beam"
        for t, b in cells
    ]
    return go.Scatter(
        x=[t for t, _ in cells],
        y=[at[(t, b.beam)] for t, b in cells],
        mode="markers+text",
        text=[label(b) for _, b in cells],
        textposition="top center",
        customdata=[[t, b.beam] for t, b in cells],
        hovertext=hover,
        hoverinfo="text",
        marker={"size": 14, "color": STATUS_COLOURS[status], "line": {"color": outline,
                                                                      "width": 3}},
        name=status,
    )  # fmt: skip


def _pruned(run: DecodeRun, row: int) -> go.Scatter:
    """One faded node per step for the continuations it pruned; the hover lists them."""
    steps = [(r.step, [b for b in r.beams if b.status == "pruned"]) for r in run.steps]
    steps = [(t, cut) for t, cut in steps if cut]
    hover = [
        f"step {t} · {len(cut)} pruned<br>"
        + "<br>".join(f"{token_text(b.token)} {b.score:.3f}" for b in cut[:12])
        + ("<br>…" if len(cut) > 12 else "")
        for t, cut in steps
    ]
    return go.Scatter(
        x=[t for t, _ in steps],
        y=[row] * len(steps),
        mode="markers+text",
        text=[str(len(cut)) for _, cut in steps],
        textposition="middle right",
        hovertext=hover,
        hoverinfo="text",
        marker={"size": 10, "color": STATUS_COLOURS["pruned"], "opacity": 0.6},
        name="pruned (count)",
    )


@dataclass(frozen=True)
class Candidates:
    """What the candidates of one live beam at a step show: a bar per token, ranked from 1,
    the one taken marked; the title as lines (the figure joins them with <br>)."""

    title: list[str]
    labels: list[str]
    probs: list[float]
    taken: list[bool]


def candidates_of(
    run: DecodeRun, step: int, row: int | None = None, node: Node | None = None
) -> Candidates:
    """The most probable next tokens of one live beam at a step, ranked from 1 (default: the
    row the followed path extends; node: the beam followed, default the output's)."""
    path = followed(run, step, node)
    taken = path[step] if step < len(path) else None
    if row is None:
        row = 0 if taken is None or taken.parent is None else taken.parent
    rows = run.steps[step].candidates
    if not 0 <= row < len(rows):
        raise ValueError(f"beam {row} is outside 0..{len(rows) - 1} (live beams at step {step})")
    cands = rows[row]
    chosen_token = taken.token if taken is not None and (taken.parent or 0) == row else None
    sampled = run.strategy == "sample" and any(  # what the bars are not: what was drawn from
        run.params.get(k) not in (None, 1.0) for k in ("temperature", "top_k", "top_p")
    )
    title = [f"step {step} · candidates of live beam {row}"]
    title[0] += " (red: taken)" if chosen_token else ""
    title += ["the model's p, before temperature, top-k and top-p"] if sampled else []
    return Candidates(
        title=title,
        labels=[f"{i} · {token_text(c.token)}" for i, c in enumerate(cands, start=1)],
        probs=[float(c.prob) for c in cands],
        taken=[c.token == chosen_token for c in cands],
    )


def candidate_bars(
    run: DecodeRun, step: int, row: int | None = None, node: Node | None = None
) -> go.Figure:
    """The candidates_of one live beam at a step as horizontal bars, the taken one red."""
    shown = candidates_of(run, step, row, node)
    fig = go.Figure(
        go.Bar(
            x=shown.probs,
            y=shown.labels,
            orientation="h",
            marker={"color": [CHOSEN if t else CANDIDATE for t in shown.taken]},
            hovertemplate="rank %{y}<br>probability %{x:.5f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="<br>".join(shown.title),
        xaxis={"title": {"text": "probability"}, "range": [0, 1]},
        yaxis={"type": "category", "autorange": "reversed", "automargin": True},
        plot_bgcolor="white",
    )
    return fig
