"""The lens of our own models: input checks and what a trace without a target does."""

from __future__ import annotations

from pathlib import Path

import pytest

from model import InputError, ModelNotFoundError, load


def test_empty_and_too_long_text_are_refused(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError, match="empty"):
        lens.trace("")
    with pytest.raises(InputError, match=r"30 characters .* at most 23"):
        lens.trace("a" * 30)


def test_unknown_characters_and_long_inputs_warn(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    tr = lens.trace("aXa", target="a")
    assert tr.src_tokens == ("a", "<unk>", "a", "</s>")
    assert any("'X'" in w for w in tr.warnings)
    assert any("trained on at most 12" in w for w in lens.trace("a" * 13, target="a").warnings)


def test_trace_without_target_follows_the_greedy_output(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    tr = lens.trace("abc")
    assert tr.tgt_tokens[0] == "<s>"
    assert tr.tgt_logprobs is not None
    again = lens.trace("abc", target="".join(tr.tgt_tokens[1:]))
    assert again.equals(tr)


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(ModelNotFoundError, match="no model 'no-such-model'"):
        load("no-such-model")
