"""Explore redraws only what changed: another head leaves the model view as it was, neither
built again nor drawn again."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import pytest

from attnlens.record.trace import Kind, Trace
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


def test_another_head_does_not_build_the_model_view_again(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnlens import viz

    built: list[str] = []
    original = viz.model_view

    def counted(tr: Trace, kind: Kind, *args: object, **kwargs: object) -> go.Figure:
        built.append(kind)
        return original(tr, kind, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(viz, "model_view", counted)
    at = open_on(tiny_model_dir, "explore", text="bad")
    at.selectbox(key="w_head").select(1).run()
    at.selectbox(key="w_layer").select(0).run()
    assert not at.exception and built == ["cross"]
    at.text_input(key="w_text").input("dab").run()
    assert built == ["cross", "cross"]  # a new trace: built again
