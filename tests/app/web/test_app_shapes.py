"""Layer and head pickers follow the kind of attention shown: a decoder may have other layers
and heads than its encoder (ModelInfo.shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attnlens.record.trace import ModelInfo, Trace
from helpers.apptest import open_on
from helpers.synth import random_attention

SRC, TGT = ("b", "a", "d", "</s>"), ("<s>", "d", "a", "b")


def uneven_trace(*_: Any, **__: Any) -> Trace:
    """An encoder of 2 layers × 2 heads under a decoder of 1 layer × 3 heads."""
    S, T = len(SRC), len(TGT)
    masks = {"encoder_self": np.ones((S, S), bool), "decoder_self": np.tril(np.ones((T, T), bool)),
             "cross": np.ones((T, S), bool)}  # fmt: skip
    shapes = {"encoder_self": (2, 2), "decoder_self": (1, 3), "cross": (1, 3)}
    info = ModelInfo("uneven", "encoder-decoder", 2, 2, 8, decoder_layers=1, decoder_heads=3)
    return Trace(
        model=info, src_tokens=SRC, tgt_tokens=TGT,
        **{k: random_attention(*shapes[k], m, seed=i) for i, (k, m) in enumerate(masks.items())},
        **{f"{k}_mask": m for k, m in masks.items()},
        positional_encoding=None, tgt_logprobs=None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "layers", "heads"),
    [("encoder_self", [0, 1], [0, 1]), ("cross", [0], [0, 1, 2]), ("decoder_self", [0], [0, 1, 2])],
)
def test_explore_offers_the_layers_and_heads_of_the_kind_shown(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, kind: str, layers: list[int],
    heads: list[int],
) -> None:  # fmt: skip
    monkeypatch.setattr("attnlens.app.web.scaffold.traced", uneven_trace)
    at = open_on(tiny_model_dir, "explore", kind=kind, layer="1", head="2")
    assert not at.exception and not at.error
    assert at.selectbox(key="w_layer").options == [str(v) for v in layers]
    assert at.selectbox(key="w_head").options == [str(v) for v in heads]
    inside = open_on(tiny_model_dir, "inside", kind=kind)
    assert not inside.exception
    assert inside.selectbox(key="w_layer").options == [str(v) for v in layers]
