"""Readable token forms for display: Ġ / ▁ / ## handled, bytes decoded, positions kept."""

from __future__ import annotations

import pytest
import torch

from attnlens.model.lenses.hf import display_token, display_tokens
from attnlens.model.lenses.hf.lens import HFLens
from helpers.hf_models import tiny_hf


@pytest.mark.parametrize(
    ("token", "byte_level", "shown"),
    [
        ("Ġworld", True, "world"),
        ("Ã©", True, "é"),  # byte-level stand-ins for the two UTF-8 bytes of é
        ("Ã", True, "\\xc3"),  # half of a character: its byte, not a replacement mark
        ("Ċ", True, "⏎"),
        ("Ġ", True, "␣"),
        ("<s>", True, "<s>"),
        ("▁world", False, "world"),
        ("▁", False, "␣"),
        ("##ing", False, "ing"),
        ("##", False, "##"),
        ("[CLS]", False, "[CLS]"),
        ("é", False, "é"),  # not byte-level: left as is
    ],
)
def test_display_token(token: str, byte_level: bool, shown: str) -> None:
    assert display_token(token, byte_level) == shown


def test_display_tokens_keeps_one_entry_per_position_and_guesses_byte_level() -> None:
    tokens = ["<s>", "the", "Ġcat", "Ġthe", "Ġcat", "Ã©"]
    assert display_tokens(tokens) == ["<s>", "the", "cat", "the", "cat", "é"]
    assert display_tokens(["▁the", "▁cat", "▁the"]) == ["the", "cat", "the"]


@pytest.mark.parametrize(("kind", "byte_level"), [("gpt2", True), ("bert", False), ("t5", False)])
def test_a_lens_knows_its_tokenizer_scheme(kind: str, byte_level: bool) -> None:
    lens = HFLens(tiny_hf(kind), torch.device("cpu"))
    assert lens.byte_level is byte_level
    if kind == "gpt2":
        tr = lens.trace("the café")
        assert "".join(lens.display_tokens(tr.tgt_tokens[1:])) == "thecafé"
        assert "Ġc" in "".join(tr.tgt_tokens), "the record keeps the tokenizer's own strings"
