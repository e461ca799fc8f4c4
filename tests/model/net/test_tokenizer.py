from __future__ import annotations

import pytest

from attnlens.model.net.tokenizer import CharTokenizer, WordTokenizer, tokenizer_from_dict


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


def test_words_are_cut_at_whitespace_and_joined_with_one_space() -> None:
    tok = WordTokenizer(("the", "cat", "sleeps"))
    enc = tok.encode("  the\tcat \n sleeps ")
    assert enc.tokens == ["the", "cat", "sleeps"] and enc.ids == [4, 5, 6]
    assert tok.decode(enc.ids + [tok.eos_id, 4]) == "the cat sleeps"
    assert tok.count("the  cat") == 2 and tok.count("   ") == 0
    assert tok.spell(["<s>", "the", "cat", "</s>", "sleeps"]) == "the cat"
    assert len(tok) == 7


def test_unknown_words_become_unk() -> None:
    enc = WordTokenizer(("the", "cat")).encode("the dog The cat")
    assert enc.ids == [4, 3, 3, 5]
    assert enc.tokens == ["the", "<unk>", "<unk>", "cat"]
    assert enc.unknown == ["dog", "The"]


def test_checkpoint_dicts_rebuild_either_kind() -> None:
    for tok in (CharTokenizer("ab "), WordTokenizer(("lo", "gat"))):
        again = tokenizer_from_dict(tok.to_dict())
        assert type(again) is type(tok) and again.vocab == tok.vocab
    with pytest.raises(ValueError, match="'bpe'"):
        tokenizer_from_dict({"kind": "bpe"})


@pytest.mark.parametrize(
    "words",
    [("a", "a"), ("two words",), ("",), ("<s>",)],
    ids=["repeat", "space", "empty", "special"],
)
def test_bad_word_lists_are_refused(words: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        WordTokenizer(words)


def test_typed_special_names_are_read_as_unk_and_listed() -> None:
    tok = WordTokenizer(("the", "cat"))
    enc = tok.encode("the <pad> <s> cat </s> <unk>")
    assert enc.ids == [4, 3, 3, 5, 3, 3]
    assert enc.specials == ["<pad>", "<s>", "</s>", "<unk>"]
    assert tok.spell(["the", "</s>", "cat"]) == "the"  # records' tokens keep their meaning
