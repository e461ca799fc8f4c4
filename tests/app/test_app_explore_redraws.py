"""Explore redraws only what changed: another head leaves the model view's chart as it was."""

from __future__ import annotations

from pathlib import Path

from helpers.apptest import open_on


def test_another_head_redraws_the_heatmap_and_lines_not_the_model_view(
    tiny_model_dir: Path,
) -> None:
    at = open_on(tiny_model_dir, "explore", text="bad")
    heatmap, lines, view = at.get("plotly_chart")
    at.selectbox(key="w_head").select(1).run()
    assert not at.exception
    heatmap2, lines2, view2 = at.get("plotly_chart")
    assert heatmap2.proto.spec != heatmap.proto.spec and lines2.proto.spec != lines.proto.spec
    assert view2.proto.spec == view.proto.spec and view2.proto.id == view.proto.id  # not redrawn
    at.selectbox(key="w_kind").select("encoder_self").run()
    assert at.get("plotly_chart")[2].proto.spec != view.proto.spec  # another kind: redrawn
