"""Model-view thumbnails made clickable: a few invisible points per thumbnail name its head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go

import model
import viz
from viz.click_targets import clickable_thumbnails


def test_every_thumbnail_gets_points_naming_its_head(tiny_model_dir: Path) -> None:
    tr = model.load(str(tiny_model_dir)).trace("bad", target="dab")
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
    tr = model.load(str(tiny_model_dir)).trace("ba", target="ab")
    fig = clickable_thumbnails(viz.model_view(tr, "cross"))
    overlay = next(t for t in fig.data if isinstance(t, go.Scatter))
    assert len(overlay.x) == 3 * 3  # 3 queries × 3 keys, all under the grid of 6
