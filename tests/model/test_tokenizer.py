from __future__ import annotations

from model.tokenizer import CharTokenizer


def test_round_trip_and_specials() -> None:
    tok = CharTokenizer("abc ")
    enc = tok.encode("ab c")
    assert enc.ids == [4, 5, 7, 6]
    assert tok.decode(enc.ids + [tok.eos_id, 4]) == "ab c"
    assert tok.vocab[:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert len(tok) == 8


def test_unknown_characters_become_unk() -> None:
    enc = CharTokenizer("ab").encode("aZb!")
    assert enc.ids == [4, 3, 5, 3]
    assert enc.tokens == ["a", "<unk>", "b", "<unk>"]
    assert enc.unknown == ["Z", "!"]
