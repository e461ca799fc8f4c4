"""Model-view thumbnails made clickable: a few invisible points per thumbnail name its head."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import attnlens
from attnlens import viz
from attnlens.app.click_targets import clickable, clickable_thumbnails
from attnlens.viz.decode_step import up_to_step


def test_every_thumbnail_gets_points_naming_its_head(tiny_model_dir: Path) -> None:
    tr = attnlens.load(str(tiny_model_dir)).trace("bad", target="dab")
    fig = clickable_thumbnails(viz.model_view(tr, "cross"), grid=3)
    thumbs = [t for t in fig.data if isinstance(t, go.Heatmap)]
    points = [t for t in fig.data if isinstance(t, go.Scatter)]
    assert len(thumbs) == len(points) == 4
    for thumb, overlay in zip(thumbs, points, strict=True):
        assert (overlay.xaxis, overlay.yaxis) == (thumb.xaxis, thumb.yaxis)
        assert {tuple(c) for c in np.asarray(overlay.customdata)} == {tuple(thumb.meta)}
        assert len(overlay.x) == 3 * 3  # a 3 × 3 grid over 4 × 4 cells
        assert set(overlay.x) <= set(thumb.x) and set(overlay.y) <= set(thumb.y)
        assert thumb.x[0] in overlay.x and thumb.x[-1] in overlay.x  # corners reached
        assert thumb.hoverinfo == "skip"
    assert fig.layout.hoverdistance >= 50


def test_small_thumbnails_get_a_point_per_cell(tiny_model_dir: Path) -> None:
    tr = attnlens.load(str(tiny_model_dir)).trace("ba", target="ab")
    fig = clickable_thumbnails(viz.model_view(tr, "cross"))
    overlay = next(t for t in fig.data if isinstance(t, go.Scatter))
    assert len(overlay.x) == 3 * 3  # 3 queries × 3 keys, all under the grid of 6


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(tiny_model_dir))


def test_tree_cut_at_a_step(lens: attnlens.Lens) -> None:
    run = lens.decode("bad", strategy="beam", beam_size=2, max_len=5)
    fig = clickable(up_to_step(viz.beam_tree(run), 1))
    assert tuple(fig.layout.xaxis.range) == (-0.5, 1.5)
    assert fig.layout.title.text.endswith("up to step 1")
    nodes = [t for t in json.loads(fig.to_json())["data"] if t.get("customdata") is not None]
    assert nodes and all(isinstance(t["customdata"], list) for t in nodes)  # clickable in the app
    edges = [t for t in fig.data if t.mode == "lines"]
    ends = [x for t in edges for x in list(t.x)[1::3]]
    assert ends and max(ends) == 1  # edges into step 1 kept, none into the steps ahead
    full = [x for t in viz.beam_tree(run).data if t.mode == "lines" for x in list(t.x)[1::3]]
    assert max(full) == len(run.steps) - 1 > 1
    assert not [t for t in up_to_step(viz.beam_tree(run), 0).data if t.mode == "lines" and t.x]
