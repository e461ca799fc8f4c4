"""Explore on a decoder-only model under AppTest: its greedy continuation where an
encoder-decoder shows "Output: …", and each position's likeliest next tokens in a table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from attnlens import load
from attnlens.app.web.explore.next_tokens import (
    AT_ONCE,
    CONTINUATION_TOKENS,
    TABLE_ROWS,
    TOP,
    quoted,
)
from attnlens.app.web.safe_text import md
from attnlens.viz.shared.labels import visible as seen  # how a table draws a control character
from helpers.apptest import open_bundled, open_on
from helpers.hf_zoo import zoo_folder
from helpers.long_gpt2 import words
from helpers.parts import predictor


def table(at: AppTest) -> pd.DataFrame:
    """The next-token table (the page's only dataframe)."""
    [frame] = at.dataframe
    value = frame.value
    return value.data if hasattr(value, "data") else value  # a Styler holds its frame


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def test_lm_shows_its_continuation_and_each_positions_next_tokens() -> None:
    at = open_bundled("explore", "lm")
    assert not at.exception and not at.error
    text = at.text_input(key="w_text").value
    lens = load("lm", device="cpu")
    run = lens.decode(text, "greedy", max_len=CONTINUATION_TOKENS)  # computed here on its own
    assert f'Continuation: "{lens.text_of(run.output_tokens)}"' in texts(at)
    assert not any(t.startswith("Output:") for t in texts(at))
    frame = table(at)
    assert len(frame) == len(text) + 1  # <s>, then each character
    assert frame["token"].tolist()[1:] == [seen(c) for c in text]  # a space drawn as ␣
    assert frame["1st"].iloc[-1] == seen(run.output_tokens[0])  # greedy takes the likeliest
    p = frame[[f"p({o})" for o in ("1st", "2nd", "3rd")]].to_numpy()  # (T, TOP)
    assert p.shape[1] == TOP and np.all(np.diff(p, axis=1) <= 0) and np.all(p.sum(1) <= 1 + 1e-6)


def test_a_long_input_caps_the_table_keeping_its_last_position_and_says_so() -> None:
    """Issue 49: the table showed the first 100 positions, so a long input's last one, where
    the continuation starts, was missing."""
    at = open_bundled("explore", "lm")
    long = ("the cat sat on the mat " * 6)[:120]  # lm reads 127 characters
    at.text_input(key="w_text").input(long).run()
    assert not at.exception and not at.error
    shown = table(at)
    T = len(long) + 1
    assert len(shown) == TABLE_ROWS < T
    assert shown["position"].tolist() == [*range(TABLE_ROWS - 1), T - 1]
    assert shown["token"].iloc[-1] == long[-1]  # the text's last character
    captions = [c.value for c in at.caption]
    said = f"Positions 0 to {TABLE_ROWS - 2} and the last, {T - 1} (where the continuation "
    assert md(said + f"starts), of {T} are shown.") in captions


def test_a_text_with_no_room_left_says_why_there_is_no_continuation(tiny_lm_dir: Path) -> None:
    at = open_on(tiny_lm_dir, "explore")
    lens = load(str(tiny_lm_dir), device="cpu")
    at.text_input(key="w_text").input("a" * lens.max_tokens).run()
    assert not at.exception and not at.error
    assert any("No continuation" in c.value and "no room" in c.value for c in at.caption)
    assert len(table(at)) == lens.max_tokens + 1  # the predictions at each position still show


def test_an_encoder_decoder_shows_its_output_and_no_continuation(tiny_model_dir: Path) -> None:
    at = open_on(tiny_model_dir, "explore")
    assert not at.exception
    assert any(t.startswith("Output: ") for t in texts(at))
    assert not any(t.startswith("Continuation:") for t in texts(at)) and not at.dataframe


def test_a_continuation_is_quoted_with_its_line_breaks_drawn() -> None:
    assert quoted(" to the\nend\t") == '" to the⏎end⇥"'


def test_a_hugging_face_decoder_shows_its_continuation_and_readable_next_tokens() -> None:
    folder = zoo_folder("gpt2")  # byte-level BPE: Ġthe reads as "the"
    at = open_on(folder, "explore")
    assert not at.exception and not at.error
    lens = load(str(folder), device="cpu")
    text = at.text_input(key="w_text").value
    run = lens.decode(text, "greedy", max_len=CONTINUATION_TOKENS)
    assert f'Continuation: "{lens.text_of(run.output_tokens)}"' in texts(at)
    frame = table(at)
    nt = predictor(lens).next_tokens(text, TOP)
    shown = [seen(t) for t in lens.display_tokens(nt.tokens)]
    assert frame["token"].tolist() == shown
    assert frame["1st"].tolist() == [seen(lens.display_tokens([r[0]])[0]) for r in nt.top_tokens]
    assert not any("Ġ" in t for t in frame["token"])


def test_past_its_length_the_continuation_waits_for_a_click(long_gpt2_dir: Path) -> None:
    """Each reads the whole input again: a long one's come on request, then stay."""
    folder = long_gpt2_dir
    text = words(AT_ONCE + 40)
    at = open_on(folder, "explore", text=text)
    assert not at.exception and not at.error
    assert not any(t.startswith("Continuation:") for t in texts(at)) and not at.dataframe
    at.button(key="w_next_tokens").click().run(timeout=120)
    lens = load(str(folder), device="cpu")
    run = lens.decode(text, "greedy", max_len=CONTINUATION_TOKENS)
    assert f'Continuation: "{lens.text_of(run.output_tokens)}"' in texts(at)
    assert len(table(at)) == TABLE_ROWS
    at.run(timeout=120)  # another rerun, the same text: still shown, not asked again
    assert any(t.startswith("Continuation:") for t in texts(at))


def test_a_long_text_filling_the_model_offers_its_next_tokens_only(long_gpt2_dir: Path) -> None:
    """At the model's last position there is nothing to continue: the button offers what it
    will do, and the table comes without a continuation, saying why."""
    folder = long_gpt2_dir
    lens = load(str(folder), device="cpu")
    text = words(lens.max_tokens - 1)  # with its start token, every position
    at = open_on(folder, "explore", text=text)
    assert not at.exception and not at.error
    label = at.button(key="w_next_tokens").label
    assert "no room to continue" in label and not label.startswith("Continue")
    at.button(key="w_next_tokens").click().run(timeout=120)
    assert not at.exception and not at.error
    assert any("No continuation" in c.value and "no room" in c.value for c in at.caption)
    assert not any(t.startswith("Continuation:") for t in texts(at))
    assert len(table(at)) == TABLE_ROWS
