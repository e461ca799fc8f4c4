"""The norms our own models' traces keep (model/lenses/own_norms.py) against what hooks on each
attention's value projection and W^O saw (hooks in tests only), in both kinds of record, on the
bundled lm (decoder-only) and translate (encoder-decoder: self and cross); and weight × norm."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch

from attnlens.model.lenses.own import OwnLens
from attnlens.model.lenses.own_norms import attention_module
from attnlens.model.lenses.registry import load
from attnlens.record.trace import Trace

TEXTS = {"lm": "the cat sat on the mat", "translate": "the cat sees a house"}


@functools.cache
def lens(name: str) -> OwnLens[Any]:
    found = load(name)
    assert isinstance(found, OwnLens)
    return found


def seen(
    hf: OwnLens[Any], trace: Trace
) -> dict[tuple[str, int], tuple[torch.Tensor, torch.Tensor]]:
    """Each (kind, layer)'s values (H, K, d) and heads' outputs (H, Q, d), as hooks on its
    w_v and on w_o's input saw them in one pass of the model over the trace's tokens."""
    got: dict[tuple[str, int], list[torch.Tensor]] = {}
    hooks = []
    for kind in trace.kinds:
        for layer in range(trace.shape_of(kind)[0]):
            mha = attention_module(hf.net, kind, layer)
            key = (kind, layer)
            hooks.append(mha.w_v.register_forward_hook(
                lambda m, i, o, key=key: got.setdefault(key, []).append(o[0])))  # fmt: skip
            hooks.append(mha.w_o.register_forward_pre_hook(
                lambda m, i, key=key: got.setdefault(key, []).append(i[0][0])))  # fmt: skip
    try:
        hf.attention_inputs(trace, trace.kinds[0], 0)  # one pass of the model over its tokens
    finally:
        for hook in hooks:
            hook.remove()
    out = {}
    for key, (v, o) in got.items():
        H = trace.shape_of(key[0])[1]  # type: ignore[arg-type]
        out[key] = (
            v.view(v.size(0), H, -1).transpose(0, 1),
            o.view(o.size(0), H, -1).transpose(0, 1),
        )
    return out


@pytest.mark.parametrize("record", ["weights", "scores"])
@pytest.mark.parametrize("name", ["lm", "translate"])
def test_a_traces_norms_equal_what_hooks_saw(name: str, record: str) -> None:
    hf = lens(name)
    trace = hf.trace(TEXTS[name], record=record)  # type: ignore[arg-type]
    assert trace.norms is not None and set(trace.norms) == set(trace.kinds)
    for (kind, layer), (v, o) in seen(hf, trace).items():
        w = attention_module(hf.net, kind, layer).w_o.weight.detach().double()  # type: ignore[arg-type]
        H, d = v.size(0), v.size(-1)
        slices = [w[:, h * d : (h + 1) * d] for h in range(H)]
        carried = torch.stack([(v[h].double() @ slices[h].T).norm(dim=-1) for h in range(H)])
        written = torch.stack([(o[h].double() @ slices[h].T).norm(dim=-1) for h in range(H)])
        norms = trace.head_norms(kind)  # type: ignore[arg-type]
        for got, want in ((norms.carried[layer], carried), (norms.written[layer], written)):
            gap = float((torch.from_numpy(got).double() - want).abs().max())
            assert gap <= 1e-5 * max(1.0, float(want.abs().max())), (kind, layer, gap)
    kind = trace.kinds[-1]
    tile = trace.head(kind, 0, 1, slice(1, 4), slice(0, 3), measure="norm")
    weights = trace.head(kind, 0, 1, slice(1, 4), slice(0, 3))
    np.testing.assert_allclose(tile, weights * trace.norms[kind].carried[0, 1, :3], rtol=1e-6)


def test_records_keep_their_norms_and_older_ones_say_they_have_none() -> None:
    trace = lens("translate").trace(TEXTS["translate"], record="scores")
    for back in (Trace.from_json(trace.to_json()), Trace.from_npz(trace.to_npz())):
        assert back.equals(trace) and back.norms is not None
    older = Trace.from_dict({k: v for k, v in trace.to_dict().items() if k != "norms"})
    assert older.norms is None and not older.equals(trace)
    with pytest.raises(ValueError, match="holds no norms"):
        older.head("cross", 0, 0, measure="norm")
    with pytest.raises(ValueError, match="measure must be one of weight, norm"):
        trace.head("cross", 0, 0, measure="size")  # type: ignore[arg-type]
