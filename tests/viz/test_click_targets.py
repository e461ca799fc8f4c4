"""Model-view thumbnails made clickable: one invisible point per cell, naming its head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go

import model
import viz
from viz.click_targets import clickable_thumbnails


def test_every_cell_of_every_thumbnail_gets_a_point(tiny_model_dir: Path) -> None:
    tr = model.load(str(tiny_model_dir)).trace("bad", target="dab")
    view = viz.model_view(tr, "cross")
    fig = clickable_thumbnails(view)
    thumbs = [t for t in fig.data if isinstance(t, go.Heatmap)]
    points = [t for t in fig.data if isinstance(t, go.Scatter)]
    assert len(thumbs) == len(points) == 4
    for thumb, overlay in zip(thumbs, points, strict=True):
        assert (overlay.xaxis, overlay.yaxis) == (thumb.xaxis, thumb.yaxis)
        layer, head = thumb.meta
        z = np.asarray(thumb.z, dtype=float)
        assert len(overlay.x) == np.isfinite(z).sum()
        assert {tuple(c[:2]) for c in overlay.customdata} == {(layer, head)}
        assert sorted(c[2] for c in overlay.customdata) == sorted(z[np.isfinite(z)].tolist())
        assert thumb.hoverinfo == "skip"
    assert all(t.hoverinfo != "skip" for t in view.data)  # the original is left alone
