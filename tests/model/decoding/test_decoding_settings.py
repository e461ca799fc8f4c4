"""Decoding settings: every bad value is refused with a message naming the value and the limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attnlens import InputError, load
from attnlens.model.decoding.heads import HeadRef, head_name, parse_head
from attnlens.model.decoding.request import MAX_BEAM
from attnlens.record.decode import DecodeRun


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "beam", "beam_size": 0}, r"beam size must be between 1 and 16, got 0"),
        ({"strategy": "beam", "beam_size": MAX_BEAM + 1}, r"between 1 and 16, got 17"),
        ({"strategy": "sample", "temperature": 0.0}, r"temperature must be greater than 0, got 0"),
        ({"strategy": "sample", "temperature": -1.0}, r"greater than 0, got -1"),
        ({"strategy": "sample", "top_p": 0.0}, r"top-p must be in \(0, 1\], got 0"),
        ({"strategy": "sample", "top_p": 1.01}, r"top-p must be in \(0, 1\], got 1.01"),
        ({"strategy": "sample", "top_k": 0}, r"top-k must be at least 1, got 0"),
        ({"max_len": 24}, r"max length 24 is above this model's limit of 23"),
        ({"max_len": 0}, r"max length must be at least 1, got 0"),
        ({"max_len": 5, "force": {5: "a"}}, r"forced step 5 .* 0 to 4 \(max length 5\)"),
        ({"force": {-1: "a"}}, r"forced step -1 is outside"),
        ({"force": {0: "zz"}}, r"forced token 'zz' at step 0 is not in .* vocabulary of 13"),
        ({"ablate": ["2.0"]}, r"head cross:2.0 does not exist: .* layers 0-1 and heads 0-1"),
        ({"ablate": ["decoder_self:0.2"]}, r"head decoder_self:0.2 does not exist"),
        ({"ablate": ["decoder:0.2"]}, r"head decoder_self:0.2 does not exist"),
        ({"ablate": ["1-2"]}, r"head '1-2' is not LAYER.HEAD"),
        ({"ablate": ["self:1.1"]}, r"must be encoder_self, decoder_self or cross, got 'self'"),
        ({"strategy": "topk"}, r"strategy must be greedy, beam or sample, got 'topk'"),
        ({"strategy": "beam", "length_penalty": -0.5}, r"length penalty must be .* got -0.5"),
    ],
)
def test_bad_settings_raise_input_error(
    tiny_model_dir: Path, kwargs: dict[str, Any], message: str
) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError, match=message):
        lens.decode("abc", **kwargs)


def test_head_names_default_to_cross_on_encoder_decoder_and_decoder_on_decoder_only() -> None:
    assert parse_head("1.2", "encoder-decoder") == HeadRef("cross", 1, 2)
    assert parse_head("1.2", "decoder") == HeadRef("decoder_self", 1, 2)
    assert parse_head("1.2", "encoder") == HeadRef("encoder_self", 1, 2)
    assert parse_head(" encoder_self:0.3 ", "encoder-decoder") == HeadRef("encoder_self", 0, 3)
    assert str(parse_head("decoder_self:10.11", "encoder-decoder")) == "decoder_self:10.11"
    assert str(parse_head("cross:1.2", "encoder-decoder")) == "cross:1.2"


@pytest.mark.parametrize(
    ("old", "new"),
    [("encoder:0.3", "encoder_self:0.3"), ("decoder:1.0", "decoder_self:1.0"),
     (" decoder:10.11 ", "decoder_self:10.11")],
)  # fmt: skip
def test_the_older_kind_names_are_read_as_the_records_kinds(old: str, new: str) -> None:
    for architecture in ("encoder-decoder", "decoder", "encoder"):
        ref = parse_head(old, architecture)
        assert ref == parse_head(new, architecture) and str(ref) == new
        assert head_name(old, architecture) == new
    assert head_name("x.y", "decoder") == "x.y"  # left for the caller to refuse


def test_a_saved_run_naming_heads_the_older_way_replays_to_the_same_run(
    tiny_model_dir: Path,
) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    run = lens.decode("abc", ablate=["decoder_self:1.0", "encoder_self:0.1", "cross:0.0"])
    assert run.params["ablate"] == ["cross:0.0", "decoder_self:1.0", "encoder_self:0.1"]
    saved = json.loads(run.to_json())  # as a record written before the kinds were renamed
    saved["params"]["ablate"] = ["decoder:1.0", "encoder:0.1", "cross:0.0"]
    old = DecodeRun.from_json(json.dumps(saved))
    again = lens.decode("abc", strategy=old.strategy, **old.params)
    assert again.equals(run) and again.params["ablate"] == run.params["ablate"]
    unablated = json.loads(lens.decode("abc").to_json())
    assert unablated["steps"] != saved["steps"]  # the replay did ablate: its attention differs


def test_params_record_every_setting_used_so_the_run_replays(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    run = lens.decode("abc", strategy="sample", top_k=3, force={1: "b"}, ablate=["0.1"])
    assert run.params == {
        "max_len": 23,
        "temperature": 1.0,
        "top_k": 3,
        "top_p": None,
        "seed": run.params["seed"],
        "force": {1: "b"},
        "ablate": ["cross:0.1"],
    }
    assert isinstance(run.params["seed"], int)  # drawn when none was given, and kept
    again = lens.decode("abc", strategy=run.strategy, **run.params)
    assert again.equals(run)
    beam = lens.decode("abc", strategy="beam", beam_size=3, length_penalty=0.6)
    assert beam.params == {
        "max_len": 23, "beam_size": 3, "length_penalty": 0.6, "force": {}, "ablate": []
    }  # fmt: skip


def test_more_heads_to_ablate_than_the_model_has_is_refused(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError, match="13 heads to ablate, but the model has only 12 heads"):
        lens.decode("abc", ablate=["0.0"] * 13)  # 3 kinds × 2 layers × 2 heads
    assert lens.decode("abc", ablate=["0.0"] * 12).params["ablate"] == ["cross:0.0"]
