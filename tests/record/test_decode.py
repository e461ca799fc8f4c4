"""The DecodeRun record: the attnlens.decode JSON of the README, losslessly both ways."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from attnlens import Lens, bundled_models, load
from attnlens.record.decode import DecodeRun


@pytest.fixture(scope="module")
def run(tiny_model_dir: Path) -> DecodeRun:
    lens = load(str(tiny_model_dir), device="cpu")
    return lens.decode("abca", strategy="beam", beam_size=3, force={1: "b"}, ablate=["0.1"])


def test_json_has_every_field_of_the_contract(run: DecodeRun) -> None:
    data = json.loads(run.to_json())
    assert data["schema"] == "attnlens.decode/2"  # /2 adds the prefix; /1 still loads
    assert data["prefix"] == ["<s>"]
    assert data["strategy"] == "beam"
    assert data["params"]["force"] == {"1": "b"}
    assert data["src_tokens"] == ["a", "b", "c", "a", "</s>"]
    best = data["hypotheses"][0]
    assert data["output_tokens"] == best["tokens"] and data["output_text"] == best["text"]
    assert data["score"] == best["score"]
    for h in data["hypotheses"]:
        assert {"tokens", "text", "score", "finished"} <= set(h)
    L, H, S = 2, 2, 5
    for t, step in enumerate(data["steps"]):
        assert step["step"] == t
        for beam in step["beams"]:
            assert set(beam) == {"beam", "parent", "token", "logprob", "score", "status"}
            assert beam["status"] in ("alive", "finished", "pruned")
        B = len(step["candidates"])
        assert np.shape(step["cross_attention"]) == (L, H, B, S)
        assert np.shape(step["decoder_self_attention"]) == (L, H, B, t + 1)
        assert all(set(c) == {"token", "prob"} for row in step["candidates"] for c in row)
    assert data["model"]["n_layers"] == L


def test_round_trip_is_lossless(run: DecodeRun) -> None:
    back = DecodeRun.from_json(run.to_json())
    assert back.equals(run)
    assert back.params["force"] == {1: "b"}
    for a, b in zip(back.steps, run.steps, strict=True):
        assert a.decoder_self_attention.dtype == np.float32
        assert np.array_equal(a.decoder_self_attention, b.decoder_self_attention)
        assert a.cross_attention is not None and b.cross_attention is not None
        assert np.array_equal(a.cross_attention, b.cross_attention)
    assert back.hypotheses == run.hypotheses and back.steps[1].beams == run.steps[1].beams


def test_attention_rows_sum_to_one(run: DecodeRun) -> None:
    for step in run.steps:
        assert step.cross_attention is not None
        np.testing.assert_allclose(step.cross_attention.sum(-1), 1.0, atol=1e-5)
        np.testing.assert_allclose(step.decoder_self_attention.sum(-1), 1.0, atol=1e-5)


def test_another_schema_is_refused(run: DecodeRun) -> None:
    data = run.to_dict() | {"schema": "attnlens.trace/1"}
    with pytest.raises(ValueError, match=r"expected schema 'attnlens\.decode/1'"):
        DecodeRun.from_dict(data)


def test_long_frame_holds_every_weight_with_its_key_token(run: DecodeRun) -> None:
    frame = run.to_frame()
    sizes = [s.decoder_self_attention.size + s.cross_attention.size for s in run.steps]  # type: ignore[union-attr]
    assert len(frame) == sum(sizes)
    t = 2
    row = run.steps[t].beams[0].parent
    assert row is not None
    pick = frame[(frame.step == t) & (frame.row == row) & (frame.kind == "decoder_self")]
    pick = pick[(pick["layer"] == 1) & (pick["head"] == 0)]
    assert list(pick.weight) == list(run.steps[t].decoder_self_attention[1, 0, row])
    path = run.path(t - 1, row)
    assert list(pick.key_token) == ["<s>", *(b.token for b in path)]
    cross = frame[(frame.kind == "cross") & (frame.step == 0)]
    assert list(cross.key_token.unique()) == list(dict.fromkeys(run.src_tokens))


def test_long_frame_holds_each_keys_norm_as_the_record_does(run: DecodeRun) -> None:
    """The carried column: ‖f_h(xⱼ)‖ of each row's key, exactly the step's own array, for
    both kinds; NaN in a run that holds no norms."""
    assert run.has_norms
    frame = run.to_frame()
    assert list(frame.columns)[-2:] == ["weight", "carried"]
    for step in run.steps:
        for kind, carried in (("decoder_self", step.decoder_self_carried),
                              ("cross", step.cross_carried)):  # fmt: skip
            assert carried is not None
            pick = frame[(frame.step == step.step) & (frame.kind == kind)]
            assert pick.carried.dtype == np.float32
            assert np.array_equal(pick.carried.to_numpy(), carried.ravel())
    bare = dataclasses.replace(
        run,
        steps=tuple(
            dataclasses.replace(s, decoder_self_carried=None, cross_carried=None) for s in run.steps
        ),
    )
    plain = bare.to_frame()
    assert plain.carried.isna().all() and plain.drop(columns="carried").equals(
        frame.drop(columns="carried")
    )
    assert list(DecodeRun.from_json(run.to_json()).to_frame().carried) == list(frame.carried)


def test_beams_frame_has_a_row_per_beam(run: DecodeRun) -> None:
    beams = run.beams_frame()
    assert len(beams) == sum(len(s.beams) for s in run.steps)
    assert set(beams.status) <= {"alive", "finished", "pruned"}
    assert list(beams.columns) == ["step", "beam", "parent", "token", "logprob", "score", "status"]


def test_a_version_1_record_still_loads_with_its_prefix_derived(run: DecodeRun) -> None:
    """attnlens.decode/1 had no prefix: an encoder-decoder's was the start token."""
    old = run.to_dict() | {"schema": "attnlens.decode/1"}
    del old["prefix"]
    back = DecodeRun.from_dict(old)
    assert back.prefix == ("<s>",) and back.to_frame().equals(run.to_frame())


def test_a_decoder_only_run_keys_each_step_by_its_prompt(lm: Lens) -> None:
    """The bug of issue 12: the frame assumed the decoder started from <s> alone, and raised
    IndexError on a decoder-only run (its decoder starts from the whole prompt)."""
    prompt_run = lm.decode("bad cab", max_len=5)
    assert prompt_run.prefix == ("<s>", "b", "a", "d", " ", "c", "a", "b")
    frame = prompt_run.to_frame()
    assert len(frame) == sum(s.decoder_self_attention.size for s in prompt_run.steps)
    last = prompt_run.steps[-1]
    keys = prompt_run.keys(last.step, 0)
    assert len(keys) == last.decoder_self_attention.shape[-1]
    old = prompt_run.to_dict() | {"schema": "attnlens.decode/1"}
    del old["prefix"]  # /1 kept a decoder-only prompt in src_tokens
    assert DecodeRun.from_dict(old).prefix == prompt_run.prefix


@pytest.mark.skipif("lm" not in {e.name for e in bundled_models()}, reason="lm is not bundled")
def test_the_bundled_language_models_decode_record_has_a_frame() -> None:
    run = load("lm").decode("The return", max_len=5)
    assert len(run.to_frame()) == sum(s.decoder_self_attention.size for s in run.steps)
