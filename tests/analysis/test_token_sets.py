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


MODELS = [("llama", "decoder_self"), ("qwen2", "decoder_self"), ("bart", "cross"),
          ("bart", "encoder_self")]  # fmt: skip


@pytest.mark.parametrize(("name", "kind"), MODELS)
@pytest.mark.parametrize("side", ["queries", "keys"])
@pytest.mark.parametrize("spread", [True, False])
def test_every_head_is_the_brute_force_of_its_whole_map(
    name: str, kind: Kind, side: str, spread: bool
) -> None:
    """llama: rotary, grouped-query keys, causal; qwen2: a sliding window of 3 from layer 1 on
    (the queries a narrow key set can reach end 3 after it); bart: an encoder and cross."""
    weights, scores = traces(name)
    assert getattr(scores, kind) is None and getattr(weights, kind) is not None
    queries, keys = weights.tokens(kind)
    n = len(queries) if side == "queries" else len(keys)
    positions = [2, 3, n // 2, n - 1] if spread else [3, 4]
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


def test_a_set_past_the_weights_it_may_need_names_the_largest_that_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    weights, _ = traces("llama")
    Q = len(weights.tgt_tokens)
    L, H = weights.model.shape("decoder_self")
    monkeypatch.setattr("attnlens.analysis.token_sets.MAX_WEIGHTS", L * H * Q * 3)
    set_attention(weights, "decoder_self", "keys", (0, 1, 2))  # 3 keys fit
    fits = rf"a set of 4 keys needs .* \({L * H} heads × {Q} positions a key\); at most 3 keys fit"
    with pytest.raises(ValueError, match=fits):
        set_attention(weights, "decoder_self", "keys", (0, 1, 2, 3))


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


@pytest.mark.parametrize("record", ["weights", "scores"])
def test_a_sets_norm_measure_is_weight_times_each_keys_norm(record: str) -> None:
    """measure="norm": every αᵢⱼ of a set's profile becomes αᵢⱼ ‖f_h(xⱼ)‖, from either record."""
    from attnlens.analysis.token_sets import set_attention
    from attnlens.model.lenses.registry import load

    trace = load("reverse", device="cpu").trace("abcabca", record=record)  # type: ignore[arg-type]
    assert trace.norms is not None
    w = trace.attention("cross")
    assert w is not None
    an = w * trace.norms["cross"].carried[:, :, None, :]  # (L, H, Q, K)
    keys = set_attention(trace, "cross", "keys", (0, 2), measure="norm")
    np.testing.assert_allclose(keys.profile, an[..., [0, 2]].sum(-1), rtol=1e-5, atol=1e-7)
    rows = set_attention(trace, "cross", "queries", (1, 3), measure="norm")
    np.testing.assert_allclose(rows.profile, an[:, :, [1, 3]].mean(2), rtol=1e-5, atol=1e-7)
    assert keys.measure == rows.measure == "norm"
