"""The Lessons page under AppTest: each lesson renders; predict, then reveal, then check."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.lessons_text import LESSONS
from helpers.apptest import open_on


def open_page(model_dir: Path, **params: str) -> AppTest:
    return open_on(model_dir, "lessons", **{"text": "bad", "target": "dab", **params})


@pytest.mark.parametrize("lesson", [item.key for item in LESSONS])
def test_every_lesson_renders_with_a_live_figure(tiny_model_dir: Path, lesson: str) -> None:
    at = open_page(tiny_model_dir, lesson=lesson)
    assert not at.exception and not at.error
    assert at.radio(key="w_lesson").value == lesson
    assert len(at.get("plotly_chart")) == 1  # the figure beside the text; the answer waits
    assert at.button(key=f"reveal_{lesson}")


def test_reveal_checks_the_guess_and_shows_the_answer(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, lesson="masks")
    at.selectbox(key="w_q_masks").select(1).run()
    at.selectbox(key="w_guess_masks").select(1).run()
    at.button(key="reveal_masks").click().run()
    assert not at.exception
    assert any("Right" in s.value for s in at.success)  # position 1 may look back to 1
    assert len(at.get("plotly_chart")) == 2
    at.selectbox(key="w_guess_masks").select(3).run()
    assert any("Not quite" in w.value for w in at.warning)
    at.button(key="hide_masks").click().run()
    assert len(at.get("plotly_chart")) == 1


def test_bad_input_gives_a_message(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, text="")
    assert not at.exception
    assert any("empty" in e.value for e in at.error)


@pytest.mark.parametrize("lesson", [item.key for item in LESSONS])
def test_a_decoder_only_model_follows_every_lesson_with_what_it_has(
    tiny_lm_dir: Path, lesson: str
) -> None:
    """No encoder, no cross-attention: each lesson stands in the decoder's own attention,
    says so, and reveals without an exception (one lesson used to raise)."""
    at = open_on(tiny_lm_dir, "lessons", text="bad cafe", lesson=lesson)
    assert not at.exception and not at.error
    item = next(x for x in LESSONS if x.key == lesson)
    says_stand_in = any("instead" in c.value for c in at.caption)
    assert says_stand_in == (item.kind != "decoder_self")
    assert len(at.get("plotly_chart")) == 1
    at.button(key=f"reveal_{lesson}").click().run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 2
