"""Explore on modern attention under AppTest (issue 36): on a Llama shape (32 query heads over 8
key/value heads) the every-head grid says how the query heads group, the enlarged head names
rotary positions, and the lines view draws a chosen range of queries past 256 positions; on a
Gemma-2 shape the sliding layer's band is sent and the global layer's is not. Random weights,
built here (tests/helpers/long_modern.py), the record kept as scores (budget below weights)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from helpers.apptest import drawn_by_browser, head_grids, lines_views, open_on
from helpers.long_gpt2 import words
from helpers.long_modern import WINDOW, long_modern

N = 400  # 401 positions with the start token


def zoom(at: AppTest) -> dict[str, object]:
    (payload,) = drawn_by_browser(at, "attnlens_head_zoom")
    return payload


def test_a_gqa_model_groups_its_heads_and_draws_a_range_of_lines(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "8")  # weights: 41 MB
    at = open_on(long_modern("llama", tmp_path_factory.mktemp("llama")), "explore", text=words(N))
    assert not at.exception and not at.error
    (grid,) = head_grids(at)
    assert grid["kv_group"] == 4 and grid["shape"][:2] == [2, 32]
    head = zoom(at)
    assert "rotary positions (RoPE)" in str(head["marks_caption"]) and head["band"] == []
    (lines,) = lines_views(at)
    assert lines["query_at"][0] == N + 1 - 256 and len(lines["query_at"]) == 256
    assert 0 < int(lines["count"]) <= 256 * 8
    assert "queries 145–400, each to its 8 heaviest keys" in str(lines["title"])
    (start,) = at.number_input
    start.set_value(32).run()
    assert not at.exception
    (lines,) = lines_views(at)
    assert lines["query_at"][0] == 32 and lines["query_at"][-1] == 32 + 255
    assert len(head_grids(at)) == 1  # the grid is not sent again for another range


def test_a_gemma2_shape_bands_its_sliding_layer_only(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "8")  # weights: 41 MB
    at = open_on(long_modern("gemma2", tmp_path_factory.mktemp("gemma2")), "explore", text=words(N))
    assert not at.exception
    assert zoom(at)["band"] == [] and zoom(at)["window"] is None  # layer 1: every key
    at.selectbox(key="w_layer").select(0).run()
    head = zoom(at)
    assert head["window"] == WINDOW and len(head["band"]) == 2  # type: ignore[arg-type]
    assert f"sliding window of {WINDOW} keys" in str(head["marks_caption"])
    (grid,) = head_grids(at)
    assert grid["kv_group"] == 2
