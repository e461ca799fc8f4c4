"""How messages quote what a user typed: as it is drawn, never as Python's repr escapes it."""

from __future__ import annotations

from attnlens.record.errors import characters, literal, quoted

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467"  # one emoji of five code points


def test_an_emoji_of_several_code_points_is_quoted_whole() -> None:
    assert literal(f"hi {FAMILY}") == f"'hi {FAMILY}'"
    assert "u200d" not in literal(FAMILY) and "u200d" in repr(FAMILY)


def test_what_moves_or_hides_the_text_is_written_as_a_code() -> None:
    assert literal("a\tb\nc") == "'a\\tb\\nc'"
    assert literal("x\u202ey") == "'x\\u202ey'"  # a right-to-left override, never drawn
    assert literal("it's") == '"it\'s"'


def test_characters_are_counted_as_a_person_counts_them() -> None:
    accent = "e\u0301"  # e and a combining acute accent
    assert list(characters(f"a{FAMILY}{accent}b")) == ["a", FAMILY, accent, "b"]


def test_a_piece_that_draws_nothing_alone_is_named() -> None:
    assert quoted(["a", "\u200d", "a", "\t"]) == "'a', U+200D ZERO WIDTH JOINER, '\\t'"
