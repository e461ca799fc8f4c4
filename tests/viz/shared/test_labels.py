"""Token labels: visible, escaped, unique per position, readable form with the raw in hover."""

from __future__ import annotations

from attnlens.viz.shared.labels import (
    hover_labels,
    positions_axis,
    produced_labels,
    visible,
    wrapped,
)


def test_blank_tokens_are_drawn_not_left_empty() -> None:
    """The issue: a space token showed as blank."""
    assert visible(" ") == "␣" and visible("  ") == "␣␣" and visible("\t") == "\\x09"
    assert visible("a b") == "a b" and visible("") == ""


def test_the_hover_names_the_raw_token_only_where_it_differs() -> None:
    assert hover_labels(["Ġthe", "cat"], [" the", "cat"]) == ["0 ·  the (token Ġthe)", "1 · cat"]
    assert produced_labels(["<s>", "##a"], ["<s>", "a"]) == [
        "0 · &lt;s&gt; → a (tokens &lt;s&gt; → ##a)",
        "1 · a → end (tokens ##a → end)",
    ]


def test_a_short_axis_labels_every_position_and_a_long_one_every_kth() -> None:
    assert positions_axis(["a", "b"]).ticks == {}
    long = positions_axis([f"t{i}" for i in range(100)], limit=10)
    assert long.ticks["tickvals"] == long.values[::10] and len(long.values) == 100


def test_wrapped_lines_keep_every_word_and_fit_where_words_allow() -> None:
    text = "random q, k (8 keys): the largest weight as d_k grows"
    lines = wrapped(text, 20).split("<br>")
    assert " ".join(lines) == text and all(len(line) <= 20 for line in lines) and len(lines) > 1
    assert wrapped("Multi-Head Attention", 20) == "Multi-Head Attention"  # fits: one line
    assert wrapped("an extraordinarily long-hyphenated-word", 10).split("<br>")[-1] == (
        "long-hyphenated-word"  # a word longer than the width keeps its own line
    )
