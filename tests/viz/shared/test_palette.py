"""One palette (viz/shared/palette.py): its scales are the ones Plotly's names gave before, a
head's weights are drawn in the same blues by every figure and by the browser, and no figure
names a scale or a colour of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.colors import hex_to_rgb, qualitative, unlabel_rgb

from attnlens.record.trace import Trace
from attnlens.viz import head_heatmap, model_view
from attnlens.viz.heads.colour_scale import legend
from attnlens.viz.heads.head_grid import head_grid
from attnlens.viz.lecture.heads_row import heads_row
from attnlens.viz.shared import palette

VIZ = Path(__file__).resolve().parents[3] / "viz"
NAMED = {"Blues": palette.WEIGHTS, "Greens": palette.ALIGNMENT, "Purples": palette.FLOW,
         "Viridis": palette.MEASURE, "RdBu": palette.SIGNED}  # fmt: skip


def rgb(colour: str) -> tuple[int, ...]:
    found = hex_to_rgb(colour) if colour.startswith("#") else unlabel_rgb(colour)
    return tuple(round(float(v)) for v in found)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_each_scale_is_the_one_plotly_names(name: str) -> None:
    theirs = go.Heatmap(z=[[0]], colorscale=name).colorscale
    ours = go.Heatmap(z=[[0]], colorscale=NAMED[name]).colorscale
    assert [at for at, _ in ours] == pytest.approx([at for at, _ in theirs])
    assert [rgb(c) for _, c in ours] == [rgb(c) for _, c in theirs]


def test_heads_sharing_a_plot_take_plotlys_qualitative_colours() -> None:
    assert tuple(qualitative.Plotly) == palette.HEAD_COLOURS


def test_every_view_of_a_head_draws_the_same_blues(trace: Trace) -> None:
    """The heatmap, a row of heads, the thumbnails, the browser's grid and its zoom legend:
    the same stops (the thumbnails' offset past the transparent byte 0)."""
    blues = [tuple(c) for c in palette.BLUES]
    for fig in (head_heatmap(trace, "encoder_self", 0, 0), heads_row(trace, "encoder_self", 0)):
        assert [rgb(c) for _, c in fig.data[0].colorscale] == blues
    thumbnails = model_view(trace, "encoder_self").data[0].colorscale
    assert [rgb(c) for _, c in thumbnails[2:]] == blues
    assert [
        tuple(int(v) for v in c[1:]) for c in head_grid(trace, "encoder_self").data()["colors"]
    ] == blues
    assert [tuple(int(v) for v in c[1:]) for c in legend("perceptual")["colors"]] == blues


def test_no_figure_names_a_scale_of_its_own() -> None:
    """A string given as a colorscale (one of Plotly's names) belongs in the palette only."""
    found = []
    for path in sorted(VIZ.rglob("*.py")):
        if path.name == "palette.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            pairs = [(node.arg, node.value)] if isinstance(node, ast.keyword) else []
            if isinstance(node, ast.Dict):
                pairs = [
                    (getattr(k, "value", None), v)
                    for k, v in zip(node.keys, node.values, strict=True)
                ]
            named = [v for k, v in pairs if k == "colorscale" and isinstance(v, ast.Constant)]
            found += [f"{path.name}:{v.lineno}" for v in named]
    assert not found


def test_masked_cells_are_never_a_colour_of_the_weights() -> None:
    weights = {rgb(c) for _, c in palette.WEIGHTS}
    assert rgb(palette.MASKED) not in weights
    assert np.ptp(rgb(palette.MASKED)) == 0  # a grey
