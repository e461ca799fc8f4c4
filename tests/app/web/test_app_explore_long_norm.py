"""Explore's measure on a long input under AppTest (issue 47): past 256 positions the head view
has the Measure picker; norm redraws the overview as αᵢⱼ ‖f(xⱼ)‖ (the record's own overview of
the norms), names it and goes in the address, the every-head grid carries both measures, a
token set follows; a record without norms offers weight only and says why. A GPT-2-shaped
model with random weights, built here, recorded as scores past a 1 MB budget."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import attnlens
from helpers.apptest import drawn_by_browser, head_grids, open_on
from helpers.long_gpt2 import words

N = 400
KIND = "decoder_self"


def zoom(at: AppTest) -> dict[str, object]:
    (data,) = drawn_by_browser(at, "attnlens_head_zoom")
    return data


def values(data: dict[str, object]) -> np.ndarray:
    raw = base64.b64decode(str(data["values"]))
    rows, cols = data["shape"]  # type: ignore[misc]
    return np.frombuffer(raw, dtype="<f2").astype(np.float32).reshape(rows, cols)


@pytest.fixture
def long_page(long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")  # 2 × 2 heads × 401² weights: 2.5 MB
    at = open_on(long_gpt2_dir, "explore", text=words(N))
    assert not at.exception and not at.error
    return at


def test_norm_redraws_the_overview_names_it_and_goes_in_the_address(
    long_page: AppTest, long_gpt2_dir: Path
) -> None:
    at = long_page
    before = zoom(at)
    assert before["title"] == "decoder self-attention · layer 1 · head 0"
    (grid,) = head_grids(at)
    assert grid["measure"] == "weight" and grid["other"]["measure"] == "norm"  # both, sent once
    at.toggle(key="w_pool_mean").set_value(True).run()
    at.radio(key="w_measure").set_value("norm").run()
    assert not at.exception and not at.error
    after = zoom(at)
    assert after["title"] == "decoder self-attention · layer 1 · head 0 · norm α‖f(x)‖"
    assert str(after["bar_title"]).startswith("norm α‖f(x)‖ ÷ ")
    assert after["measure"] == "norm" and "mean α‖f(x)‖" in str(after["caption"])
    assert at.query_params["measure"] == "norm"
    assert_shows_kept(after, long_gpt2_dir, "overview_norm_mean")
    at.radio(key="w_measure").set_value("weight").run()
    assert zoom(at)["title"] == before["title"] and at.query_params["measure"] == "weight"


def test_the_first_switch_finds_the_block_max_of_norms_in_the_record(
    long_page: AppTest, long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole head's block max of αᵢⱼ ‖f(xⱼ)‖ is the record's own overview (kept at trace
    time), so switching to the norms pools nothing (it took 134 ms a head at 8,192 tokens)."""
    from attnlens.app.web.explore import long_head

    def refused(*_: object) -> None:
        raise AssertionError("the whole head's norms pooled on demand")

    monkeypatch.setattr(long_head, "norm_blocks", refused)
    at = long_page
    at.radio(key="w_measure").set_value("norm").run()
    assert not at.exception and not at.error
    data = zoom(at)
    assert data["pooling"] == "max" and data["measure"] == "norm"
    assert "max α‖f(x)‖" in str(data["caption"])
    assert_shows_kept(data, long_gpt2_dir, "overview_norm_max")


def assert_shows_kept(shown_zoom: dict[str, object], folder: Path, overview: str) -> None:
    """The overview drawn (layer 1, head 0) is the record's own, as a fresh trace keeps it."""
    truth = attnlens.load(str(folder)).trace(words(N), record="scores")
    assert truth.summaries is not None
    kept = getattr(truth.summaries[KIND], overview)
    assert kept is not None
    shown = values(shown_zoom) * float(shown_zoom["unit"])  # type: ignore[arg-type]
    seen = ~np.isnan(shown)
    np.testing.assert_allclose(shown[seen], kept[1, 0].astype(np.float32)[seen], rtol=2e-3)


def test_a_token_set_follows_the_measure(long_page: AppTest) -> None:
    at = long_page
    at.text_input(key="w_set_text").set_value("5-9").run()
    at.radio(key="w_measure").set_value("norm").run()
    assert not at.exception and not at.error
    captions = [c.value.replace("\\", "") for c in at.caption]  # markdown-escaped
    assert any("one key gives them (norm)" in c for c in captions), captions


def test_an_address_with_measure_norm_opens_on_the_norms(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")
    at = open_on(long_gpt2_dir, "explore", text=words(N), measure="norm")
    assert not at.exception and not at.error
    assert not at.radio(key="w_measure").disabled and at.radio(key="w_measure").value == "norm"
    assert zoom(at)["measure"] == "norm"
    (grid,) = head_grids(at)  # the grid sent in the measure shown, the weights beside it
    assert grid["measure"] == "norm" and grid["other"]["measure"] == "weight"
    assert "norm α‖f(x)‖" in str(grid["title"])
