"""Explore's token sets under AppTest (issue 36): a word typed as a set of queries, a range as a
set of keys, each drawn as one square per head whose colour is the set's share computed from the
record (a scores record past the budget, and a weights record), the enlarged head's profile
beside it; a word the text lacks, a position past it and an empty set each get a message."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import attnlens
from attnlens.app.web.explore.token_sets import elsewhere, window_range
from attnlens.app.web.safe_text import WORD_JOINER
from attnlens.viz.heads.colour_scale import colour_position
from helpers.apptest import chart, open_bundled, open_on
from helpers.long_gpt2 import words

N = 300


def plain(markdown: str) -> str:
    """A message as read: md()'s escapes and word joiners gone."""
    return markdown.replace("\\", "").replace(WORD_JOINER, "")


def array(value: Any) -> np.ndarray:
    """A figure's 1-D array, as a list or as Plotly's typed binary data."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float)
    return np.asarray(value, dtype=float)


def test_a_word_as_queries_and_a_range_as_keys_in_every_head(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")  # kept as scores: no head's T² stored
    at = open_on(long_gpt2_dir, "explore", text=words(N))
    assert not at.exception
    assert any("Type a word, positions or a range" in c.value for c in at.caption)
    at.text_input(key="w_set_text").input("w7").run()
    assert not at.exception and not at.error
    truth = attnlens.load(str(long_gpt2_dir)).trace(words(N), record="scores")
    assert truth.decoder_self is None and truth.scores is not None
    tokens = truth.tokens("decoder_self")[0]
    where = [i for i, t in enumerate(tokens) if t == "w7"]
    assert len(where) > 1
    grid = chart(at, "queries: the largest mean weight one key gets")
    squares = grid["data"][0]
    rows = np.stack([truth.head("decoder_self", lay, h)[where].mean(0)
                     for lay in range(2) for h in range(2)])  # fmt: skip
    want = colour_position(rows.max(-1), "perceptual")
    np.testing.assert_allclose(array(squares["marker"]["color"]), want, atol=1e-6)
    assert f"{len(where)} queries" in grid["layout"]["title"]["text"]
    profile = chart(at, "layer 1 · head 0: mean weight of the set's queries")
    np.testing.assert_allclose(array(profile["data"][0]["y"]), rows[2], atol=1e-6)
    assert any(f"The set: {where[0]} · w7, {where[1]} · w7" in plain(c.value) for c in at.caption)

    at.radio(key="w_set_side").set_value("keys").run()
    at.text_input(key="w_set_text").input("0-3").run()
    assert not at.exception and not at.error
    squares = chart(at, "4 keys: the share of all attention")["data"][0]
    shares = np.stack([truth.head("decoder_self", lay, h)[:, :4].sum(1).mean()
                       for lay in range(2) for h in range(2)])  # fmt: skip
    np.testing.assert_allclose(array(squares["marker"]["color"]), np.cbrt(shares), atol=1e-6)
    assert squares["hovertext"][1] == f"layer 0 · head 1<br>the set receives {shares[1]:.4f}"


BAD = (
    ("w99", "no query token spells 'w99' in this text"),
    ("5, 900", "position 900 is outside 0..20 (21 queries)"),
    (" , ", "the set of queries is empty"),
)


def test_a_set_that_names_nothing_says_what(long_gpt2_dir: Path) -> None:
    at = open_on(long_gpt2_dir, "explore", text=words(20))  # a short input: its weights record
    for typed, message in BAD:
        at.text_input(key="w_set_text").input(typed).run()
        assert not at.exception
        (error,) = at.error
        assert message in plain(error.value)
        assert at.text_input(key="w_set_text").value == typed  # what was typed stays


def test_a_short_inputs_set_is_read_from_its_weights(long_gpt2_dir: Path) -> None:
    at = open_on(long_gpt2_dir, "explore", text=words(20))
    at.radio(key="w_set_side").set_value("keys").run()
    at.text_input(key="w_set_text").input("w0, 2").run()
    assert not at.exception and not at.error
    truth = attnlens.load(str(long_gpt2_dir)).trace(words(20))
    assert truth.decoder_self is not None  # the weights themselves
    keys = [1, 2]  # w0 is the first word, after the start token
    shares = truth.decoder_self[:, :, :, keys].sum(-1).mean(-1).ravel()
    squares = chart(at, "2 keys: the share of all attention")["data"][0]
    np.testing.assert_allclose(array(squares["marker"]["color"]), np.cbrt(shares), atol=1e-6)


def test_the_zoomed_windows_queries_or_keys_become_the_set(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")
    at = open_on(long_gpt2_dir, "explore", text=words(N))
    at.button(key="w_set_from_keys").click().run()  # nothing zoomed yet: the page says what to do
    assert not at.exception
    assert any("Drag a box on the enlarged head first" in i.value for i in at.info)
    assert at.text_input(key="w_set_text").value == ""
    shown = (123, "decoder_self")
    held = (shown, (10, 20), (0, 301))
    assert window_range(held, shown, "queries") == "10-19"
    assert window_range(held, shown, "keys") == "0-300"
    assert window_range(held, (124, "decoder_self"), "keys") is None  # another trace's zoom
    assert window_range(None, shown, "keys") is None


def test_a_word_of_the_other_text_says_which_side_has_it() -> None:
    tokens = (("<s>", "kasa", "</s>"), ("the", "house", "</s>"))  # cross: queries, keys
    assert elsewhere("house", tokens, "queries") == (
        "; the keys have it: pick Keys (what they receive)"
    )
    assert (
        elsewhere("kasa", tokens, "keys") == "; the queries have it: pick Queries (where they look)"
    )
    assert elsewhere("dog", tokens, "queries") == ""
    same = (("a", "b"), ("a", "b"))  # self-attention: the other side has nothing else
    assert elsewhere("c", same, "keys") == ""


def test_a_bundled_models_cross_attention_as_a_key_set() -> None:
    """reverse: an encoder-decoder of §3, its record the weights, the set among the source."""
    at = open_bundled("explore", "reverse", text="hello world")
    at.radio(key="w_set_side").set_value("keys").run()
    at.text_input(key="w_set_text").input("l").run()
    assert not at.exception and not at.error
    truth = attnlens.load("reverse").trace("hello world")
    where = [i for i, t in enumerate(truth.src_tokens) if t == "l"]
    assert truth.cross is not None and len(where) == 3
    shares = truth.cross[:, :, :, where].sum(-1).mean(-1).ravel()
    squares = chart(at, "3 keys: the share of all attention")["data"][0]
    np.testing.assert_allclose(array(squares["marker"]["color"]), np.cbrt(shares), atol=1e-6)
