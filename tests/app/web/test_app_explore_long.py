"""Explore on a long input under AppTest (issue 36): past 256 positions the enlarged head is its
overview, drawn by the browser from one head's payload, with the every-head grid from the
record's overviews; the record keeps scores past the budget, never every head's T²; a short
input keeps the Plotly heatmap. A GPT-2-shaped model with random weights, built here."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import attnlens
from attnlens.app.web.explore.head_zoom import RESET, window_of
from helpers.apptest import drawn_by_browser, figures, head_grids, open_on
from helpers.long_gpt2 import words

N = 400


def zooms(at: AppTest) -> list[dict[str, object]]:
    return drawn_by_browser(at, "attnlens_head_zoom")


def values(data: dict[str, object]) -> np.ndarray:
    raw = base64.b64decode(str(data["values"]))
    rows, cols = data["shape"]  # type: ignore[misc]
    dtype = "<f4" if data["dtype"] == "f4" else "<f2"
    return np.frombuffer(raw, dtype=dtype).astype(np.float32).reshape(rows, cols)


def test_a_long_input_past_the_budget_shows_one_heads_overview(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")  # 2 × 2 heads × 401² weights: 2.5 MB
    at = open_on(long_gpt2_dir, "explore", text=words(N))
    assert not at.exception and not at.error
    assert figures(at) == []  # no Plotly heatmap of 401 × 401
    (zoom,) = zooms(at)
    assert zoom["title"] == "decoder self-attention · layer 1 · head 0"
    assert zoom["pooling"] == "max" and zoom["whole"] and zoom["size"] == [N + 1, N + 1]
    assert zoom["scale"] == "perceptual" and zoom["selected"] == [1, 0]
    truth = attnlens.load(str(long_gpt2_dir)).trace(words(N), record="scores")
    assert truth.summaries is not None
    kept = truth.summaries["decoder_self"].overview_max[1, 0].astype(np.float32)
    shown = values(zoom)
    seen = ~np.isnan(shown)
    np.testing.assert_array_equal(shown[seen], kept[seen])
    (grid,) = head_grids(at)
    assert grid["kind"] == "decoder_self" and grid["selected"] == [1, 0]
    captions = " ".join(c.value for c in at.caption)
    assert at.number_input[0].label == "Lines view: the 256 queries from position"
    assert "401 tokens of the 600 this model reads" in captions
    (box,) = at.text_area  # a paragraph is edited in a box of several lines
    assert box.key == "w_text" and box.value == words(N)


def test_the_colour_rule_and_the_pooling_are_the_users_to_pick(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")
    at = open_on(long_gpt2_dir, "explore", text=words(N))
    at.toggle(key="w_linear").set_value(True).run()
    at.toggle(key="w_pool_mean").set_value(True).run()
    at.selectbox(key="w_head").select(1).run()
    assert not at.exception
    (zoom,) = zooms(at)
    assert zoom["scale"] == "linear" and zoom["bar_title"] == "weight (linear colour)"
    assert zoom["pooling"] == "mean" and "block's mean weight" in str(zoom["caption"])
    assert zoom["title"] == "decoder self-attention · layer 1 · head 1"


def test_a_long_input_within_the_budget_is_pooled_from_its_weights(long_gpt2_dir: Path) -> None:
    at = open_on(long_gpt2_dir, "explore", text=words(300))
    assert not at.exception and not at.error
    (zoom,) = zooms(at)
    truth = attnlens.load(str(long_gpt2_dir)).trace(words(300))
    assert truth.decoder_self is not None
    block = truth.decoder_self[1, 0, :3, :3].max()  # the first block: 3 × 3 positions
    np.testing.assert_allclose(values(zoom)[0, 0], block, rtol=1e-3)


def test_a_short_input_keeps_the_heatmap(long_gpt2_dir: Path) -> None:
    at = open_on(long_gpt2_dir, "explore", text=words(20))
    assert not at.exception and zooms(at) == [] and len(at.text_area) == 0
    assert at.text_input(key="w_text").value == words(20)
    (heat,) = figures(at)
    assert heat["data"][0]["colorbar"]["title"]["text"] == "weight (colour ∝ ∛weight)"
    at.text_input(key="w_text").input(words(N)).run()  # pasted a paragraph: the box grows
    assert not at.exception and at.text_area(key="w_text").value == words(N)
    assert len(zooms(at)) == 1


@pytest.mark.parametrize(
    ("value", "window"),
    [
        ({"rows": [10, 20], "cols": [0, 401]}, ((10, 20), (0, 401))),
        ({"reset": True}, RESET),
        ({"rows": [10, 402], "cols": [0, 5]}, None),  # past the head
        ({"rows": [20, 10], "cols": [0, 5]}, None),  # empty
        ({"rows": [1.5, 10], "cols": [0, 5]}, None),
        ({"rows": [True, 10], "cols": [0, 5]}, None),
        ({"rows": [0, 10]}, None),
        ("rows", None),
    ],
)
def test_a_zoom_names_a_window_of_the_head_or_nothing(value: object, window: object) -> None:
    assert window_of(value, (401, 401)) == window
