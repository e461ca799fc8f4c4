"""Induction heads drawn: every head by its two scores, and the previous-token head beside the
induction head on one sequence, with arrows from each earlier match to the token after it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnlens.record.experiment import ExperimentResult
from attnlens.record.picking import earlier_matches
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.colour_scale import HOVER_DIGITS, colorbar, colorscale, colour_position
from attnlens.viz.heads.heatmap import cell_gap
from attnlens.viz.shared.labels import position_labels
from attnlens.viz.shared.palette import MARK
from attnlens.viz.shared.point_labels import placed_labels

TARGET = 0.9  # issue 15's bar for a sharp head
ARROW_COLOUR = MARK
MAX_ARROWS = 64  # beyond this the arrows hide the heatmap
SHOWN = 256  # a longer input shows its last SHOWN positions (T² cells would not draw)
LABELLED = 0.3  # heads scoring this much on either score are named on the chart
X_SPAN, Y_SPAN = (-0.02, 1.05), (-0.02, 1.08)  # the axes' ranges


def induction_scores_chart(result: ExperimentResult) -> go.Figure:
    """Each head at (previous-token score, induction score), labelled layer.head; the dashed
    lines mark 0.9."""
    h = result.heads
    named = h[np.maximum(h["induction"], h["previous_token"]) >= LABELLED]  # the rest: on hover
    text, place = placed_labels(
        named["previous_token"], named["induction"],
        [f"{layer}.{k}" for layer, k in zip(named["layer"], named["head"], strict=True)],
        X_SPAN, Y_SPAN, lines_y=[TARGET], lines_x=[TARGET],
    )  # fmt: skip
    labels = {i: (t, p) for i, t, p in zip(named.index, text, place, strict=True)}
    fig = go.Figure()
    for layer in sorted(h["layer"].unique()):
        rows = h[h["layer"] == layer]
        fig.add_trace(
            go.Scatter(
                x=rows["previous_token"],
                y=rows["induction"],
                mode="markers+text",
                name=f"layer {layer}",
                text=[labels.get(i, ("", ""))[0] for i in rows.index],
                customdata=[f"{layer}.{k}" for k in rows["head"]],
                textposition=[labels.get(i, ("", "top center"))[1] for i in rows.index],
                marker={"size": 11},
                hovertemplate="head %{customdata}<br>previous-token %{x:.3f}<br>induction %{y:.3f}"
                "<extra></extra>",
            )
        )
    for line in (
        {"x0": TARGET, "x1": TARGET, "y0": 0, "y1": 1},
        {"x0": 0, "x1": 1, "y0": TARGET, "y1": TARGET},
    ):
        fig.add_shape(type="line", line={"dash": "dash", "color": "grey"}, **line)
    summary = result.summary
    ratio = summary.get("copy_loss_ratio")
    shown = "" if ratio is None else f" · second-copy loss {ratio:.0%} of the first"
    fig.update_layout(
        title=f"induction heads · {result.model} · {summary.get('sequences')} sequences of "
        f"{summary.get('block')} random tokens, twice{shown}",
        xaxis={"title": "previous-token score", "range": list(X_SPAN)},
        yaxis={"title": "induction (prefix-matching) score", "range": list(Y_SPAN)},
    )
    return fig


def induction_heads_view(
    trace: Trace,
    previous_head: tuple[int, int],
    induction_head: tuple[int, int],
    kind: Kind = "decoder_self",
) -> go.Figure:
    """The previous-token head and the induction head side by side on trace's sequence; in
    the induction head, an arrow in each row from the earlier match of the query's token to
    the token after it ("look back one after the match")."""
    check_heads(trace, kind, (previous_head, induction_head))
    tokens = trace.tokens(kind)[0]
    T = len(tokens)
    first = max(0, T - SHOWN)  # a long input: its last SHOWN positions, said in the title
    shown = slice(first, T)
    labels = position_labels(tokens)[first:]
    matches = [(q, j) for q, j in earlier_matches(tokens) if j >= first]
    two = {(layer, head): trace.head(kind, layer, head, shown, shown)
           for layer, head in (previous_head, induction_head)}  # fmt: skip
    shares = looked_at(two[previous_head], two[induction_head], first, T, matches)
    # one row axis for both: the rows are the same tokens, and the right panel's own labels ran
    # into the left panel on word tokens (minilm: "7 · because" cut at the left)
    fig = make_subplots(1, 2, shared_yaxes=True, horizontal_spacing=0.03)
    for col, pair in enumerate((previous_head, induction_head), start=1):
        fig.add_trace(head_panel(two[pair], labels, showscale=col == 2), 1, col)
    for arrow in match_arrows(matches[:MAX_ARROWS], labels, first):
        fig.add_annotation(arrow)
    names = (
        f"previous-token head {previous_head[0]}.{previous_head[1]}<br>"
        f"{shares[0]:.0%} on the token before",
        f"induction head {induction_head[0]}.{induction_head[1]}<br>"
        + (f"{shares[1]:.0%} on the token after the match" if matches else "no token repeats"),
    )
    for i, name in enumerate(names, start=1):
        suffix = "" if i == 1 else "2"
        fig.update_layout(
            {
                f"xaxis{suffix}": {
                    "type": "category",
                    "side": "top",
                    "tickangle": -90,
                    "title": {"text": name},
                },
                f"yaxis{suffix}": {"type": "category", "autorange": "reversed"},
            }
        )
    fig.update_layout(
        title={
            "text": "look back one after the match"
            + (f" · positions {first}–{T - 1} of {T:,}" if first else ""),
            "subtitle": {
                "text": "arrows: from a token's earlier occurrence to the token after it, "
                "where an induction head looks"
            },  # a second line of the text itself was cut at the top of the figure
            "y": 0.98,
            "yanchor": "top",
        },
        margin={"t": 190},
        height=640,
    )
    return fig


def check_heads(trace: Trace, kind: Kind, heads: tuple[tuple[int, int], ...]) -> None:
    """Each (layer, head) within the model's, or a ValueError naming the value and the range."""
    L, H = trace.model.shape(kind)[:2]
    for layer, head in heads:
        if not 0 <= layer < L:
            raise ValueError(f"layer {layer} is outside 0..{L - 1} ({L} layers)")
        if not 0 <= head < H:
            raise ValueError(f"head {head} is outside 0..{H - 1} ({H} heads)")


def looked_at(
    prev_w: np.ndarray, ind_w: np.ndarray, first: int, T: int, matches: list[tuple[int, int]]
) -> tuple[float, float]:
    """The previous-token head's mean weight on the token before, and the induction head's on
    the token after each earlier match (NaN without one); weights (T', T') of the shown
    positions, from `first` on."""
    rows = range(max(1, first), T)
    before = float(np.mean([prev_w[q - first, q - 1 - first] for q in rows])) if rows else 0.0
    if not matches:
        return before, float("nan")
    return before, float(np.mean([ind_w[q - first, j + 1 - first] for q, j in matches]))


def head_panel(weights: np.ndarray, labels: list[str], showscale: bool) -> go.Heatmap:
    """One head's weights coloured as every head's heatmap: at 1,024 tokens a row's weights are
    mostly a few thousandths, and on a linear scale both panels read blank."""
    weights = weights.astype(np.float32)
    return go.Heatmap(
        z=colour_position(weights, "perceptual"),
        customdata=weights,
        x=labels,
        y=labels,
        zmin=0.0,
        zmax=1.0,
        colorscale=colorscale(),
        colorbar=colorbar("perceptual"),
        showscale=showscale,
        xgap=cell_gap(len(labels)),  # 256 cells with 1 px gaps left white lines
        ygap=cell_gap(len(labels)),
        hovertemplate="query %{y}<br>key %{x}<br>weight "
        f"%{{customdata:.{HOVER_DIGITS}f}}<extra></extra>",
    )


def match_arrows(
    matches: list[tuple[int, int]], labels: list[str], first: int
) -> list[dict[str, object]]:
    """In the induction head's panel, an arrow in each row from the earlier match of the
    query's token to the token after it."""
    return [
        {
            "x": labels[j + 1 - first],
            "y": labels[q - first],
            "ax": labels[j - first],
            "ay": labels[q - first],
            "xref": "x2",
            "yref": "y2",
            "axref": "x2",
            "ayref": "y2",
            "showarrow": True,
            "arrowhead": 2,
            "arrowwidth": 2,
            "arrowcolor": ARROW_COLOUR,
            "text": "",
        }
        for q, j in matches
    ]
