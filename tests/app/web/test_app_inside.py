"""Inside the Transformer under AppTest: the five steps carry the model's own numbers."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

import attnlens
from attnlens.model.lenses.causal import CausalLens
from helpers.apptest import chart, open_on


def open_page(model_dir: Path, **params: str) -> AppTest:
    return open_on(model_dir, "inside", **{"text": "bad", "target": "dab", **params})


def array(value: Any) -> np.ndarray:
    """A figure's array, whether Plotly wrote it as nested lists or as typed binary data."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).astype(float)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=float)


def softmax_cells(at: AppTest) -> np.ndarray:
    return array(chart(at, "4 · softmax", at_start=True)["data"][0]["z"])


def test_default_render_shows_positions_masks_and_five_steps(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    assert not at.exception and not at.error
    for title in ("1 · Q·Kᵀ", "2 · Q·Kᵀ / √d_k", "3 · masked", "4 · softmax", "5 · weights · V"):
        assert chart(at, title, at_start=True)
    assert len(at.get("plotly_chart")) == 7  # positional encoding, masks, five steps


def test_the_softmax_step_is_the_recorded_attention(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, kind="decoder_self", layer="1", head="1")
    assert not at.exception and not at.error
    recorded = attnlens.load(str(tiny_model_dir)).trace("bad", target="dab").decoder_self
    assert recorded is not None
    np.testing.assert_allclose(softmax_cells(at), recorded[1, 1], atol=1e-5)
    masked = chart(at, "3 · masked", at_start=True)["data"][0]["text"]
    assert masked[0][1] == "−∞"  # the first decoder position may not see the second


def test_changing_the_head_changes_the_numbers(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    before = softmax_cells(at)
    at.selectbox(key="w_head").select(1).run()
    assert not at.exception
    assert not np.allclose(before, softmax_cells(at))
    at.selectbox(key="w_kind").select("encoder_self").run()
    assert chart(at, "4 · softmax", at_start=True)["data"][0]["x"][0] == "0 · b"


def test_bad_input_gives_a_message(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    at.text_input(key="w_text").input("").run()
    assert not at.exception
    assert any("empty" in e.value for e in at.error)


def test_a_decoder_only_model_shows_its_five_steps(tiny_lm_dir: Path, lm: CausalLens) -> None:
    at = open_on(tiny_lm_dir, "inside", text="bad cafe", layer="1", head="0")
    assert not at.exception and not at.error
    assert not any("needs one of" in i.value for i in at.info)
    recorded = lm.trace("bad cafe").decoder_self
    assert recorded is not None
    np.testing.assert_allclose(softmax_cells(at), recorded[1, 0], atol=1e-5)
