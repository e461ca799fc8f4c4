"""The Trace record: exact round trips and the long-format table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attnlens.model.lenses.registry import load
from attnlens.record.trace import SCHEMA, Trace


@pytest.fixture(scope="module")
def trace(tiny_model_dir: Path) -> Trace:
    return load(str(tiny_model_dir), device="cpu").trace("abca", target="hgg")


def test_shapes_follow_the_contract(trace: Trace) -> None:
    L, H, S, T = 2, 2, 5, 4  # "abca" + </s>; <s> + "hgg"
    assert trace.src_tokens == ("a", "b", "c", "a", "</s>")
    assert trace.tgt_tokens == ("<s>", "h", "g", "g")
    assert trace.encoder_self is not None and trace.encoder_self.shape == (L, H, S, S)
    assert trace.decoder_self is not None and trace.decoder_self.shape == (L, H, T, T)
    assert trace.cross is not None and trace.cross.shape == (L, H, T, S)
    assert trace.decoder_self_mask is not None and trace.decoder_self_mask.shape == (T, T)
    assert trace.positional_encoding is not None and trace.positional_encoding.shape[0] >= S
    assert trace.tgt_logprobs is not None and trace.tgt_logprobs.shape == (T,)
    assert np.all(trace.tgt_logprobs <= 0)


def test_rows_sum_to_one_and_masked_entries_are_zero(trace: Trace) -> None:
    for kind in trace.kinds:
        weights, mask = trace.attention(kind), trace.mask(kind)
        assert weights is not None and mask is not None
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        assert np.all(weights[..., ~mask] == 0)
    assert trace.decoder_self is not None
    assert np.all(np.triu(trace.decoder_self, k=1) == 0)


def test_json_round_trip_is_exact(trace: Trace) -> None:
    text = trace.to_json()
    data = json.loads(text)
    assert data["schema"] == SCHEMA
    assert set(data["attention"]) == {"encoder_self", "decoder_self", "cross"}
    back = Trace.from_json(text)
    assert back.equals(trace)
    assert back.to_json() == text


def test_npz_round_trip_is_exact(trace: Trace) -> None:
    assert Trace.from_npz(trace.to_npz()).equals(trace)


def test_frame_has_one_row_per_weight(trace: Trace) -> None:
    frame = trace.to_frame()
    assert list(frame.columns) == [
        "kind",
        "layer",
        "head",
        "query",
        "key",
        "query_token",
        "key_token",
        "weight",
    ]
    for kind in trace.kinds:
        weights = trace.attention(kind)
        assert weights is not None
        rows = frame[frame.kind == kind]
        assert len(rows) == weights.size
        row = rows[
            (rows["layer"] == 1) & (rows["head"] == 0) & (rows["query"] == 2) & (rows["key"] == 1)
        ].iloc[0]
        assert row.weight == weights[1, 0, 2, 1]
        q_tokens, k_tokens = trace.tokens(kind)
        assert (row.query_token, row.key_token) == (q_tokens[2], k_tokens[1])


def test_equals_notices_a_changed_weight(trace: Trace) -> None:
    data = trace.to_dict()
    data["attention"]["cross"][0][0][0][0] += 1e-3
    assert not Trace.from_dict(data).equals(trace)


def test_unknown_kind_is_refused(trace: Trace) -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        trace.attention("bogus")  # type: ignore[arg-type]


def test_optional_fields_round_trip_and_older_records_lack_them(trace: Trace) -> None:
    from dataclasses import replace

    from attnlens.record.trace import ModelInfo

    info = ModelInfo("m", "encoder-decoder", 3, 4, 16, decoder_layers=1, decoder_heads=2)
    richer = replace(
        trace, model=info, positional_scheme="learned",
        src_shown=tuple(f"·{t}" for t in trace.src_tokens), tgt_shown=None,
    )  # fmt: skip
    data = json.loads(richer.to_json())
    assert data["positional_scheme"] == "learned" and data["model"]["decoder_layers"] == 1
    assert data["shown_tokens"] == {"src": list(richer.src_shown or ()), "tgt": None}
    assert Trace.from_json(richer.to_json()).equals(richer)
    assert Trace.from_npz(richer.to_npz()).equals(richer)
    assert richer.shown("cross") == (trace.tgt_tokens, richer.src_shown)
    plain = json.loads(replace(trace, positional_scheme=None).to_json())  # as older records
    assert "positional_scheme" not in plain and "shown_tokens" not in plain
    assert "decoder_layers" not in plain["model"]  # older readers see what they always saw
    assert info.shape("encoder_self") == (3, 4) and info.shape("cross") == (1, 2)
    assert trace.model.shape("decoder_self") == (trace.model.n_layers, trace.model.n_heads)


def test_layer_masks_and_segments_round_trip_and_older_records_lack_them(trace: Trace) -> None:
    from dataclasses import replace

    assert trace.decoder_self_mask is not None
    L, T = trace.model.n_layers, len(trace.tgt_tokens)
    local = np.stack([trace.decoder_self_mask, np.eye(T, dtype=bool)][:L])  # (L, T, T)
    segments = tuple(int(i >= 2) for i in range(len(trace.src_tokens)))
    richer = replace(trace, layer_masks={"decoder_self": local}, src_segments=segments)
    data = json.loads(richer.to_json())
    assert np.array_equal(data["layer_masks"]["decoder_self"], local)
    assert data["src_segments"] == list(segments)
    for back in (Trace.from_json(richer.to_json()), Trace.from_npz(richer.to_npz())):
        assert back.equals(richer) and back.src_segments == segments
        assert np.array_equal(back.mask("decoder_self", 1), np.eye(T, dtype=bool))
    assert not richer.equals(replace(richer, layer_masks=None))
    assert np.array_equal(richer.mask("decoder_self"), trace.decoder_self_mask)  # the union
    assert np.array_equal(richer.mask("cross", 1), trace.cross_mask)  # no per-layer masks
    with pytest.raises(ValueError, match=r"layer 5 is outside 0\.\.1"):
        richer.mask("decoder_self", 5)
    plain = json.loads(trace.to_json())
    assert "layer_masks" not in plain and "src_segments" not in plain
    assert Trace.from_dict(plain).layer_masks is None and trace.src_segments is None
