"""Explore redraws only what changed: another head redraws the heatmap and the lines, and moves
the every-head grid's outline without building its cells again."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.head_grid import HeadGrid
from helpers.apptest import head_grids, lines_views, open_on


def test_another_head_redraws_the_heatmap_and_lines_and_moves_the_outline(
    tiny_model_dir: Path,
) -> None:
    at = open_on(tiny_model_dir, "explore", text="bad")
    (heatmap,), (lines,), (grid,) = at.get("plotly_chart"), lines_views(at), head_grids(at)
    at.selectbox(key="w_head").select(1).run()
    assert not at.exception
    (heatmap2,), (lines2,), (grid2,) = at.get("plotly_chart"), lines_views(at), head_grids(at)
    assert heatmap2.proto.spec != heatmap.proto.spec
    assert lines2["title"].endswith("head 1") and lines2["weight"] != lines["weight"]
    assert (grid["selected"], grid2["selected"]) == ([1, 0], [1, 1])  # the outline moved
    assert {k: v for k, v in grid2.items() if k != "selected"} == {
        k: v for k, v in grid.items() if k != "selected"
    }  # the same cells: the browser keeps what it decoded
    at.selectbox(key="w_kind").select("encoder_self").run()
    assert head_grids(at)[0]["cells"] != grid["cells"]  # another kind: other cells


def test_another_head_does_not_build_the_grid_again(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnlens.viz.heads import overview_grid

    built: list[str] = []
    original = overview_grid.head_grid  # what the page's grid builds a short input's from

    def counted(tr: Trace, kind: Kind, *args: object, **kwargs: object) -> HeadGrid:
        built.append(kind)
        return original(tr, kind, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(overview_grid, "head_grid", counted)
    at = open_on(tiny_model_dir, "explore", text="bad")
    at.selectbox(key="w_head").select(1).run()
    at.selectbox(key="w_layer").select(0).run()
    assert not at.exception and built == ["cross"]
    at.text_input(key="w_text").input("dab").run()
    assert built == ["cross", "cross"]  # a new trace: built again
