"""The Explore page under Streamlit's AppTest: renders, follows the text, and explains bad input."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

SCRIPT = str(Path(__file__).resolve().parents[2] / "app" / "main.py")


def app(model: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.session_state["default_model"] = model
    return at.run()


def test_default_render_has_a_heatmap(tiny_model_dir: Path) -> None:
    at = app(str(tiny_model_dir))
    assert not at.exception
    assert at.get("plotly_chart")


def test_typing_changes_the_figure(tiny_model_dir: Path) -> None:
    at = app(str(tiny_model_dir))
    before = at.get("plotly_chart")[0].proto.spec
    at.text_input(key="text").input("bad").run()
    at.text_input(key="target").input("dab").run()
    assert not at.exception
    after = at.get("plotly_chart")[0].proto.spec
    assert before != after
    heatmap = json.loads(after)["data"][0]
    assert len(heatmap["x"]) == 4 and len(heatmap["y"]) == 4  # b a d </s>; <s> d a b
    assert [label[-1] for label in heatmap["x"][:3]] == ["b", "a", "d"]


def test_bad_input_shows_a_message_not_an_exception(tiny_model_dir: Path) -> None:
    at = app(str(tiny_model_dir))
    at.text_input(key="text").input("").run()
    assert not at.exception
    assert any("empty" in e.value for e in at.error)


def test_a_model_that_fails_to_load_shows_a_message(tmp_path: Path) -> None:
    at = app(str(tmp_path / "nowhere"))
    assert not at.exception
    assert any("Could not load model" in e.value for e in at.error)
