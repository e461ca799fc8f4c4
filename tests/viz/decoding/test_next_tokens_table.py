"""The next-token table: one row per position, the text's own next token, the k likeliest."""

from __future__ import annotations

import numpy as np

from attnlens.record.next_tokens import NextTokens
from attnlens.viz.decoding.next_tokens_table import next_tokens_table


def record() -> NextTokens:
    tokens = ("<s>", "a", "b")
    ids = np.array([[3, 4], [4, 5], [5, 3]])
    names = {3: "a", 4: "b", 5: "c"}
    top = tuple(tuple(names[int(j)] for j in row) for row in ids)
    probs = np.array([[0.6, 0.3], [0.5, 0.25], [0.9, 0.05]], dtype=np.float32)
    return NextTokens(tokens, ids, top, probs)


def test_each_position_its_next_token_in_the_text_and_the_likeliest_with_probabilities() -> None:
    frame = next_tokens_table(record())
    assert list(frame.columns) == [
        "position", "token", "next in text", "1st", "p(1st)", "2nd", "p(2nd)",
    ]  # fmt: skip
    assert frame["token"].tolist() == ["<s>", "a", "b"]
    assert frame["next in text"][:2].tolist() == ["a", "b"]
    assert frame["next in text"].isna().tolist() == [False, False, True]  # nothing follows
    assert frame["1st"].tolist() == ["a", "b", "c"] and frame["2nd"].tolist() == ["b", "c", "a"]
    np.testing.assert_allclose(frame["p(1st)"], [0.6, 0.5, 0.9], rtol=1e-6)
    np.testing.assert_allclose(frame["p(2nd)"], [0.3, 0.25, 0.05], rtol=1e-6)


def test_rows_cap_the_table_keeping_the_last_position_and_display_rewrites_every_token() -> None:
    """Issue 49: the first 100 positions of a long input left out the last one, where the
    continuation starts."""
    frame = next_tokens_table(record(), rows=2, display=lambda ts: [t.upper() for t in ts])
    assert frame["position"].tolist() == [0, 2]
    assert frame["token"].tolist() == ["<S>", "B"]
    assert frame["next in text"][:1].tolist() == ["A"]  # the first row still names what follows
    assert frame["next in text"].isna().tolist() == [False, True]
    assert frame["1st"].tolist() == ["A", "C"]
    np.testing.assert_allclose(frame["p(1st)"], [0.6, 0.9], rtol=1e-6)
