"""A token set's attention in every head (analysis/token_sets.py) is the brute force over every
head's whole map: on a scores record (each head rebuilt whole by Trace.head, and the same model's
eager weights) and on a weights record; the typed sets name the positions they should."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from attnlens.analysis.token_sets import (
    parse_positions,
    set_attention,
)
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.record.trace import Kind, Trace
from helpers.hf_zoo import zoo_folder

TEXT = "the cat sat on the mat and the dog saw the cat on a mat"


@functools.cache
def traces(name: str) -> tuple[Trace, Trace]:
    """(the eager weights record, the scores record) of one zoo model on TEXT."""
    lens = HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    return lens.trace(TEXT), lens.trace(TEXT, record="scores")


def brute(tr: Trace, kind: Kind, side: str, positions: list[int]) -> np.ndarray:
    """(L, H, N): every head's whole map rebuilt, then the set's rows averaged or columns summed."""
    L, H = tr.model.shape(kind)
    out = []
    for layer in range(L):
        row = []
        for head in range(H):
            w = tr.head(kind, layer, head).astype(np.float64)  # (Q, K)
            row.append(w[positions].mean(0) if side == "queries" else w[:, positions].sum(1))
        out.append(row)
    return np.asarray(out)


@pytest.mark.parametrize(("name", "kind"), [("llama", "decoder_self"), ("bart", "cross"),
                                            ("bart", "encoder_self")])  # fmt: skip
@pytest.mark.parametrize("side", ["queries", "keys"])
def test_every_head_is_the_brute_force_of_its_whole_map(name: str, kind: Kind, side: str) -> None:
    """llama: rotary, grouped-query keys, causal; bart: an encoder and cross-attention."""
    weights, scores = traces(name)
    assert getattr(scores, kind) is None and getattr(weights, kind) is not None
    queries, keys = weights.tokens(kind)
    n = len(queries) if side == "queries" else len(keys)
    positions = [0, 2, 3, n - 1]
    for tr in (scores, weights):
        got = set_attention(tr, kind, side, tuple(reversed(positions)))  # type: ignore[arg-type]
        assert got.positions == tuple(positions)
        np.testing.assert_allclose(got.profile, brute(tr, kind, side, positions), atol=1e-6)
    eager = brute(weights, kind, side, positions)  # the model's own output_attentions
    on_demand = set_attention(scores, kind, side, tuple(positions))  # type: ignore[arg-type]
    np.testing.assert_allclose(on_demand.profile, eager, atol=1e-6)
    if side == "keys":
        np.testing.assert_allclose(on_demand.summary, eager.mean(-1), atol=1e-6)
        assert on_demand.peak is None
    else:
        assert on_demand.peak is not None
        np.testing.assert_allclose(on_demand.summary, eager.max(-1), atol=1e-6)
        peaks = np.take_along_axis(eager, on_demand.peak[..., None], -1)[..., 0]
        np.testing.assert_allclose(peaks, eager.max(-1), atol=1e-6)  # the peak is where it is


def test_a_key_set_wider_than_a_tile_is_summed_over_every_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tiles of 8 weights: the keys and queries both come in pieces."""
    weights, scores = traces("llama")
    monkeypatch.setattr("attnlens.analysis.token_sets.TILE_CELLS", 8)
    Q = len(weights.tgt_tokens)
    positions = list(range(1, Q, 2))  # more keys than a tile holds
    got = set_attention(scores, "decoder_self", "keys", tuple(positions))
    np.testing.assert_allclose(got.profile, brute(weights, "decoder_self", "keys", positions),
                               atol=1e-6)  # fmt: skip
    rows = set_attention(scores, "decoder_self", "queries", tuple(positions))
    np.testing.assert_allclose(rows.profile, brute(weights, "decoder_self", "queries", positions),
                               atol=1e-6)  # fmt: skip


@pytest.mark.parametrize(
    ("positions", "message"),
    [((), "the set of keys is empty"), ((0, 99), "position 99 is outside 0..")],
)
def test_a_bad_set_is_named(positions: tuple[int, ...], message: str) -> None:
    weights, _ = traces("llama")
    with pytest.raises(ValueError, match=message):
        set_attention(weights, "decoder_self", "keys", positions)
    with pytest.raises(ValueError, match="side must be one of queries, keys, got 'rows'"):
        set_attention(weights, "decoder_self", "rows", (0,))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="records no cross attention"):
        set_attention(weights, "cross", "keys", (0,))


TOKENS = ("<s>", "The", " cat", " sat", "un", "##bel", "##ievable", " the", " Cat", "!")


@pytest.mark.parametrize(
    ("text", "positions"),
    [
        ("cat", (2, 8)),  # every occurrence, any case, spaces aside
        ("the", (1, 7)),
        ("unbelievable", (4, 5, 6)),  # a word in subword pieces: each of them
        ("0, 3-4", (0, 3, 4)),
        ("cat, 2, 9", (2, 8, 9)),
        ("3..5", (3, 4, 5)),
        ("Cat  sat", (2, 3)),  # a phrase: its tokens in a row
    ],
)
def test_a_typed_set_names_its_positions(text: str, positions: tuple[int, ...]) -> None:
    assert parse_positions(text, TOKENS, "queries") == positions


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dog", "no query token spells 'dog' in this text"),
        ("cat, dog", "no query token spells 'dog'"),
        ("", "the set of queries is empty"),
        (" , ", "the set of queries is empty"),
        ("12", r"position 12 is outside 0..9 \(10 queries\)"),
        ("3-40", r"position 40 is outside 0..9"),
        ("5-3", "the range '5-3' runs backwards: write it 3-5"),
    ],
)
def test_a_typed_set_that_names_nothing_says_which_item(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_positions(text, TOKENS, "queries")
