"""Explore's figures drawn by the browser (app/web/components.py): the payloads of the every-head
grid and the lines view for a real model, checked against the model's own weights, and the
click the grid accepts. (Drawn, hovered and clicked in Chromium: test_browser_canvas.py.)"""

from __future__ import annotations

import base64

import numpy as np
import pytest

import attnlens
from attnlens.app.web.components import text_sizes
from attnlens.app.web.explore.grid_canvas import head_of
from helpers.apptest import head_grids, lines_views, open_bundled


def test_explore_on_reverse_sends_every_heads_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """reverse reads "hello" as h e l l o </s> and writes <s> o l l e h: 2 layers × 4 heads of
    6 × 6 cells, each byte 1 + round(∛weight · 254) of the model's own cross-attention (no
    mask, so no blank cells), the enlarged head outlined."""
    at = open_bundled("explore", "reverse", text="hello", layer="0", head="3")
    assert not at.exception
    (grid,) = head_grids(at)
    assert grid["shape"] == [2, 4, 6, 6] and grid["selected"] == [0, 3]
    cells = np.frombuffer(base64.b64decode(grid["cells"]), dtype=np.uint8).reshape(2, 4, 6, 6)
    weights = attnlens.load("reverse").trace("hello").cross  # (L, H, T, S)
    assert weights is not None
    expected = 1 + np.rint(np.clip(weights, 0, 1) ** (1 / 3) * 254)
    np.testing.assert_array_equal(cells, expected.astype(np.uint8))
    assert grid["key_labels"] == ["0 · h", "1 · e", "2 · l", "3 · l", "4 · o", "5 · </s>"]
    assert grid["query_labels"][0] == "0 · <s> → o" and grid["query_labels"][-1] == "5 · h → end"
    assert grid["note"] == ""  # a cell per position pair: nothing pooled
    assert (grid["text_px"], grid["title_px"]) == (12, 14)


def test_explore_on_reverse_sends_the_heads_lines() -> None:
    """Every cross-attention weight of layer 1, head 2 that is ≥ 0.02 is a line, heaviest first,
    with its weight as the model computed it."""
    at = open_bundled("explore", "reverse", text="hello", layer="1", head="2")
    (lines,) = lines_views(at)
    weights = attnlens.load("reverse").trace("hello").cross
    assert weights is not None
    w = weights[1, 2]  # (T, S)

    def arr(name: str, dtype: str) -> np.ndarray:
        return np.frombuffer(base64.b64decode(lines[name]), dtype=dtype)

    q, k, got = arr("query", "<u2"), arr("key", "<u2"), arr("weight", "<f4")
    rows, cols = np.nonzero(w >= 0.02)
    assert set(zip(q.tolist(), k.tolist(), strict=True)) == set(
        zip(rows.tolist(), cols.tolist(), strict=True)
    )
    np.testing.assert_array_equal(got, w[q, k])
    assert (np.diff(got) <= 0).all()  # heaviest first
    assert lines["keys"] == ["h", "e", "l", "l", "o", "</s>"] and lines["queries"][0] == "<s>"
    assert lines["title"] == "cross-attention (decoder → encoder)\nlayer 1 · head 2"


def test_a_projector_gets_projector_sized_text() -> None:
    at = open_bundled("explore", "reverse", text="hello", present="1")
    (grid,), (lines,) = head_grids(at), lines_views(at)
    assert (grid["text_px"], grid["title_px"]) == (24, 30) == tuple(text_sizes(True).values())
    assert (lines["text_px"], lines["title_px"]) == (24, 30)


@pytest.mark.slow
def test_a_500_token_minilm_input_sends_a_bounded_grid() -> None:
    """6 × 12 heads at 500 tokens: 56 × 56 mean-pooled blocks of 9 positions (the last of 5)
    a thumbnail, not 500 × 500: about 300 KB of payload, not 18 M cells."""
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "saw", "the", "dog"]
    text = " ".join(words[i % len(words)] for i in range(498))
    at = open_bundled("explore", "minilm", timeout=180, text=text)
    assert not at.exception
    (grid,) = head_grids(at)
    assert grid["shape"] == [6, 12, 56, 56]
    assert len(grid["cells"]) == 4 * -(-6 * 12 * 56 * 56 // 3)  # base64 of one byte a cell
    assert grid["row_edges"][:3] == [0, 9, 18] and grid["row_edges"][-1] == 500
    assert "56×56 blocks of 9×9 positions" in grid["note"] and "mean" in grid["note"]
    assert len(grid["key_labels"]) == 500 and grid["key_labels"][-1] == "499 · [SEP]"


@pytest.mark.parametrize(
    ("value", "picked"),
    [({"layer": 1, "head": 3}, (1, 3)), ({"layer": 0, "head": 0}, (0, 0)),
     ({"layer": 2, "head": 0}, None), ({"layer": 0, "head": 4}, None),
     ({"layer": -1, "head": 0}, None), ({"layer": True, "head": 0}, None),
     ({"layer": 0.5, "head": 0}, None), ({"layer": "1", "head": 0}, None),
     ({"head": 0}, None), ([1, 0], None), (None, None)],
)  # fmt: skip
def test_a_click_names_a_head_of_the_grid_or_nothing(value: object, picked: object) -> None:
    """What the browser sends is checked against the grid's 2 layers × 4 heads."""
    assert head_of(value, 2, 4) == picked
