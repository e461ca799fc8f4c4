"""The head heatmap: one layer, one head, one kind of attention, queries × keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlens.record.norms import Measure, check_measure
from attnlens.record.picking import (
    KIND_TITLES,
    allowed_of,
    attention_of,
    check_head,
    check_layer,
    true_source_hits,
)
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.colour_scale import (
    HOVER_DIGITS,
    Scale,
    check_scale,
    colorbar,
    colour_position,
)
from attnlens.viz.shared.labels import TokenAxis, positions_axis, produced_labels, token_axis
from attnlens.viz.shared.margins import BASE_FONT, grid_margins, title_px
from attnlens.viz.shared.palette import BACKGROUNDS, MARK, MASKED, WEIGHTS

GAP_LIMIT = 48  # up to this many cells a side, a 1 px gap parts them; beyond, it would hide them
ROW_PX = 26  # height of a row while the grid fits between MIN_HEIGHT and MAX_HEIGHT
MIN_HEIGHT, MAX_HEIGHT = 420, 760
PRODUCED_TITLE = "decoder position: input → produced"
TITLE_PAD = 12  # px between a title and the plot (its line box reaches 5 px below the letters)
SUBTITLE_PX = 28  # px a subtitle takes below its title (Plotly draws it at 0.7 of the title's size)


def head_heatmap(
    trace: Trace,
    kind: Kind,
    layer: int,
    head: int,
    reference: Sequence[int] | None = None,
    scale: Scale = "perceptual",
    measure: Measure = "weight",
) -> go.Figure:
    """Query tokens on rows, key tokens on columns; masked cells grey, not a low weight.
    scale: the colour rule (viz/heads/colour_scale.py): colour ∝ ∛weight, or linear; the colour bar
    says which and the hover gives the weight itself.

    On an encoder-decoder, decoder rows read "input → produced": row i is fed token i and
    produces token i + 1 (what a circle on it is about). reference: for cross-attention, the
    true source position of each output token (query t predicts output token t), drawn as
    open circles; the title counts the rows whose largest weight is on it. measure "norm":
    αᵢⱼ ‖f_h(xⱼ)‖ (record/norms.py) as a share of the head's largest, the title saying so.
    """
    weights = attention_of(trace, kind)
    check_layer(weights, layer)
    check_head(weights, head)
    allowed = allowed_of(trace, kind)  # (Q, K)
    rows, row_title = query_axis(trace, kind)
    cols = positions_axis(trace.tokens(kind)[1], trace.shown(kind)[1])
    x, y = cols.values, rows.values
    check_scale(scale)
    shown, named = measured(trace, kind, layer, head, weights[layer, head], measure)
    cells = weight_layer(shown, allowed, x, y, scale=scale)
    if named:
        cells.colorbar.title.text = named
        cells.hovertemplate = cells.hovertemplate.replace("weight ", "α‖f‖ ÷ largest ")
    layers: list[go.Heatmap | go.Scatter] = [cells]
    if not allowed.all():  # only then: at 512 tokens an empty layer would cost 1.4 MB
        layers.append(masked_layer(allowed, x, y))
    found = ""
    if reference is not None:
        hits = reference_hits(trace, layer, head, reference)
        layers.append(reference_layer(reference, x, y))
        found = f"argmax on the true source: {hits} of {len(reference)} output tokens"
    title = f"{KIND_TITLES[kind]} · layer {layer} · head {head}"
    title += " · norm α‖f(x)‖" if named else ""
    # the layout given to the constructor: update_layout's path through a nested dict took
    # 3–4 times as long (8 of Explore's 11 ms building this figure on reverse)
    return go.Figure(layers, layout=grid_layout(title, cols, rows, "key", row_title, found))


def measured(
    trace: Trace, kind: Kind, layer: int, head: int, weights: np.ndarray, measure: Measure
) -> tuple[np.ndarray, str]:
    """What a head's cells show: its weights (and no new colour-bar title), or αᵢⱼ ‖f_h(xⱼ)‖
    as a share of the head's largest, with the bar's title naming the measure and that largest."""
    if check_measure(measure) == "weight":
        return weights, ""
    norm = trace.head_norms(kind).weighted(layer, head, weights, slice(None))
    top = float(norm.max()) or 1.0
    return norm / top, f"norm α‖f(x)‖ ÷ {top:.3g}"


def query_axis(trace: Trace, kind: Kind) -> tuple[TokenAxis, str]:
    """The rows of one kind and their title: decoder rows of an encoder-decoder as
    'input → produced', any other as the positions' tokens."""
    raw, shown = trace.tokens(kind)[0], trace.shown(kind)[0]
    if kind == trace.self_kind:  # rows that read the input: its tokens
        return positions_axis(raw, shown), "query"
    return token_axis(produced_labels(raw, shown), produced_labels(shown)), PRODUCED_TITLE


def grid_layout(
    title: str,
    columns: TokenAxis,
    rows: TokenAxis,
    column_title: str = "key",
    row_title: str = "query",
    subtitle: str = "",
) -> dict[str, Any]:
    """The layout every rows × columns grid of positions shares: the first row at the top,
    column labels below (on top they would share the room above with the title), every label
    and title given room so none is cut or overlaps another (estimated from the labels before
    the first draw, viz/shared/margins.py, with automargin behind it), and a height that grows with
    the rows up to a bound. A second line of the title goes in `subtitle`, and the title's
    padding grows by its height: Plotly rests a title above the plot on its first line and
    draws any line after it, a <br> or a subtitle, below, over the top row."""
    n = len(rows.values)
    margin = grid_margins(title, drawn_labels(columns), drawn_labels(rows))
    heading, margin["t"] = grid_title(title, subtitle)
    return {
        "title": heading,
        "xaxis": {
            "title": {"text": column_title},
            "type": "category",
            "automargin": True,
            **columns.ticks,
        },
        "yaxis": {
            "title": {"text": row_title},
            "type": "category",
            "autorange": "reversed",
            "automargin": True,
            **rows.ticks,
        },
        "plot_bgcolor": BACKGROUNDS[False],
        "margin": margin,
        "height": grid_height(n),
    }


def grid_title(title: str, subtitle: str = "") -> tuple[dict[str, Any], int]:
    """A grid's title above its plot, with an optional second line in a smaller font, and
    the top margin that holds both (set before the first draw: where automargin had to grow
    it, Plotly drew the rows' tick labels for the plot's first height, off their rows)."""
    lifted = SUBTITLE_PX if subtitle else 0
    layout = {
        "text": title,
        "subtitle": {"text": subtitle, "font": {"size": BASE_FONT}},  # Plotly's own: 0.7 × title
        "automargin": True,
        "yref": "paper",
        "pad": {"b": TITLE_PAD + lifted},
    }
    return layout, title_px(f"{title}<br>{subtitle}" if subtitle else title) + lifted


def drawn_labels(axis: TokenAxis) -> list[str]:
    """The tick labels an axis draws: its ticks' texts when it thins them, else every value."""
    return list(axis.ticks.get("ticktext", axis.values))


def grid_height(rows: int) -> int:
    """Pixels for a grid of this many rows: ROW_PX a row plus room for labels, bounded."""
    return int(min(MAX_HEIGHT, max(MIN_HEIGHT, ROW_PX * rows + 220)))


def cell_gap(n: int) -> int:
    """A 1 px gap between cells while they are large enough to spare it; none beyond."""
    return 1 if n <= GAP_LIMIT else 0


def weight_layer(
    w: np.ndarray,
    allowed: np.ndarray,
    x: list[str],
    y: list[str],
    axes: tuple[str, str] = ("query", "key"),
    colorscale: list[list[Any]] = WEIGHTS,
    scale: Scale = "linear",
) -> go.Heatmap:
    """The allowed cells coloured by `scale` (colour_scale.py), the weight itself in the hover
    to a fixed HOVER_DIGITS decimals; masked cells left as gaps."""
    shown = np.where(allowed, w, np.nan).astype(np.float32)  # (rows, columns)
    perceptual = scale == "perceptual"
    value = f"%{{customdata:.{HOVER_DIGITS}f}}" if perceptual else f"%{{z:.{HOVER_DIGITS}f}}"
    return go.Heatmap(
        z=colour_position(shown, scale) if perceptual else shown,
        customdata=shown if perceptual else None,  # the weights, for the hover
        x=x,
        y=y,
        zmin=0.0,
        zmax=1.0,
        colorscale=colorscale,
        colorbar=colorbar(scale),
        hovertemplate=f"{axes[0]} %{{y}}<br>{axes[1]} %{{x}}<br>weight {value}<extra></extra>",
        xgap=cell_gap(len(x)),
        ygap=cell_gap(len(y)),
        hoverongaps=False,  # the layer beneath (or none) answers for its gaps
        name="weight",
    )


def masked_layer(allowed: np.ndarray, x: list[str], y: list[str]) -> go.Heatmap:
    """Masked cells drawn in grey on their own layer, so they never read as a low weight."""
    return go.Heatmap(
        z=np.where(allowed, np.nan, 1.0).astype(np.float32),  # (Q, K)
        x=x,
        y=y,
        colorscale=[[0.0, MASKED], [1.0, MASKED]],
        showscale=False,
        hovertemplate="query %{y}<br>key %{x}<br>masked: not allowed<extra></extra>",
        xgap=cell_gap(len(x)),
        ygap=cell_gap(len(y)),
        hoverongaps=False,  # the layer beneath (or none) answers for its gaps
        name="masked",
    )


def reference_hits(trace: Trace, layer: int, head: int, reference: Sequence[int]) -> int:
    """How many output tokens' cross-attention rows put their largest weight on the true
    source position (rows 0..len(reference)-1)."""
    weights = attention_of(trace, "cross")
    check_layer(weights, layer)
    check_head(weights, head)
    return int(true_source_hits(weights, reference)[layer, head])


def reference_layer(reference: Sequence[int], x: list[str], y: list[str]) -> go.Scatter:
    """Open circles on the cells of the true alignment."""
    return go.Scatter(
        x=[x[k] for k in reference],
        y=y[: len(reference)],
        mode="markers",
        marker={
            "symbol": "circle-open",
            "size": 14,
            "color": MARK,
            "line": {"width": 2},
        },
        name="true source",
        hovertemplate="query %{y}<br>true source %{x}<extra></extra>",
        showlegend=False,
    )
