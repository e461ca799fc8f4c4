"""What each head of a Hugging Face model carries and writes (hf/heads.py, hf/norms.py), proven on
every architecture of the test zoo: Σ_h Σⱼ αᵢⱼ f_h(xⱼ) + b_O equals each attention's output as
the model computed it (W^O's output, seen by a forward hook: hooks in tests only), with α the
trace's own (weights or scores); and the norms equal ‖W_O^h v‖, ‖W_O^h o‖ multiplied out from
what the attention call and hooks on W^O saw. On random heads and on sharp ones (scores ±40)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from transformers import AttentionInterface
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

from attnlens.model.lenses.hf import tracing
from attnlens.model.lenses.hf.capture import CapturedHeads
from attnlens.model.lenses.hf.heads import (
    EAGER_VALUES,
    HeadsError,
    LayerHeads,
    forward_heads,
    heads_attention,
    output_weights,
)
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.norms import head_norms, trace_norms
from attnlens.model.lenses.hf.twin import kernel_twin
from attnlens.model.net.contributions import head_slices, head_vectors
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Kind, Trace
from helpers.hf_zoo import ZOO, zoo_folder
from helpers.parts import runs
from helpers.sharp import SHARP, largest_score, sharp_hf_folder

CPU = torch.device("cpu")
TEXT = "the cat sat on the mat and the dog sat on the cat"


@functools.cache
def lens(name: str, folder: Path | None = None) -> HFLens:
    return HFLens(folder or zoo_folder(name), CPU, name=name)


def inputs(hf: HFLens) -> dict[str, Any]:
    ids = torch.tensor([runs(hf).token_ids(TEXT)])  # (1, N)
    out: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if hf.info.architecture == "encoder-decoder":
        out["decoder_input_ids"] = ids[:, :7]
    if hf.info.architecture != "encoder":
        out["use_cache"] = False
    return out


def projection_outputs(hf: HFLens) -> dict[tuple[Kind, int], torch.Tensor]:
    """Each attention's output as the shared (eager) model computed it: W^O's output, by a
    forward hook, (Q, d_model) per (kind, layer). ALBERT's one module serves every layer."""
    found = output_weights(hf.model, hf.model.config.model_type, hf.info).modules
    calls: dict[int, list[torch.Tensor]] = {}
    hooks = [m.register_forward_hook(lambda m, _i, o: calls.setdefault(id(m), []).append(o[0]))
             for m in {id(m): m for m in found.values()}.values()]  # fmt: skip
    try:
        with torch.inference_mode():
            hf.model(**inputs(hf))
    finally:
        for hook in hooks:
            hook.remove()
    shared = len({id(m) for m in found.values()}) < len(found)  # ALBERT: in layer order
    return {key: calls[id(m)][key[1] if shared else 0] for key, m in found.items()}


def assert_sums_to_the_layers(hf: HFLens, trace: Trace | None) -> None:
    """Σ_h Σⱼ αᵢⱼ f_h(xⱼ) + b_O against W^O's own output, every layer of every kind; α as the
    private copy's kernel gave it, and (trace) as the record keeps it."""
    model, info = hf.model, hf.info
    run = forward_heads(model, model.config.model_type, info, inputs(hf))
    projected = output_weights(model, model.config.model_type, info)
    want = projection_outputs(hf)
    assert set(run.heads) == set(info.kinds)
    for kind, layers in run.heads.items():
        for layer, heads in enumerate(layers):
            weight, bias = projected.found[kind, layer]
            H = heads.output.size(0)
            f = head_vectors(head_slices(weight, H), heads.values)  # (H, K, d_model)
            alpha = torch.stack([heads.head(h) for h in range(H)])  # (H, Q, K)
            if trace is not None:
                kept = torch.stack([torch.from_numpy(trace.head(kind, layer, h)) for h in range(H)])
                assert float((kept - alpha).abs().max()) <= 1e-6, (kind, layer)
            mixed = torch.einsum("hqk,hkd->qd", alpha.double(), f)
            mixed = mixed + (0 if bias is None else bias.double())
            own = want[kind, layer].double()
            gap = float((mixed - own).abs().max())
            assert gap <= 1e-5 * max(1.0, float(own.abs().max())), (kind, layer, gap)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_what_each_head_carries_sums_to_each_layers_own_output(name: str) -> None:
    """α as the kernel gave it; a decoder's or encoder's also as its scores record keeps it."""
    hf = lens(name)
    single = hf.info.architecture != "encoder-decoder"
    assert_sums_to_the_layers(hf, hf.trace(TEXT, record="scores") if single else None)


SHARP_MODELS = {  # zoo name → the tensors that make its queries
    "llama": "q_proj",
    "gpt2": "c_attn",
    "bert": "attention.self.query",
    "gpt-neo": "q_proj",  # eager weights only: scaled by EAGER_FACTOR
    "t5": "SelfAttention.q",
}
EAGER_FACTOR = 3000.0  # GPT-Neo's queries: most rows put more than 0.999 on one key


@functools.cache
def sharp(name: str, root: Path) -> HFLens:
    """The zoo model with its queries scaled until some score reaches past ±SHARP."""
    base = lens(name).trace(TEXT, record="scores")
    factor = EAGER_FACTOR
    if base.scores is not None:
        factor = 1.5 * SHARP / max(largest_score(next(iter(base.scores.values()))), 1e-3)
    folder = sharp_hf_folder(zoo_folder(name), root / f"sharp-{name}", factor, SHARP_MODELS[name])
    return lens(f"sharp-{name}", folder)


@pytest.mark.parametrize("name", list(SHARP_MODELS))
def test_sharp_heads_sum_to_each_layers_own_output(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    hf = sharp(name, tmp_path_factory.mktemp("sharp"))
    trace = hf.trace(TEXT, record="scores")
    if trace.scores is not None:  # eager-only models keep weights: their largest is ~1
        assert max(largest_score(layers) for layers in trace.scores.values()) >= SHARP
    else:
        weights = trace.attention(trace.kinds[0])
        assert weights is not None and (weights.max(-1) > 0.999).mean() > 0.5
    assert_sums_to_the_layers(hf, trace if hf.info.architecture != "encoder-decoder" else None)
    if hf.info.architecture != "encoder-decoder":  # the trace's own norms, on sharp heads too
        assert trace.norms is not None, trace.norms_missing
        assert_norms_as_seen(hf, trace.norms)


def _seen_values(
    module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
    attention_mask: torch.Tensor | None, **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The layer's output as HEADS computes it; in the weights slot, the values the attention
    call received (tests only)."""
    out, _ = heads_attention(module, query, key, value, attention_mask, **kwargs)
    return out, value[0].detach().clone()


AttentionInterface.register("attnlens_values_test", _seen_values)
ALL_MASK_ATTENTION_FUNCTIONS.register("attnlens_values_test", sdpa_mask)


def _falcon(out: torch.Tensor, attn: Any) -> torch.Tensor:
    kv, H, d = attn.num_kv_heads, attn.num_heads, attn.head_dim
    if attn.new_decoder_architecture:
        return out.view(1, -1, kv, H // kv + 2, d)[:, :, :, -1].transpose(1, 2)
    return out.view(1, -1, H + 2, d)[:, :, -1:].transpose(1, 2)


# eager-only architectures: the module whose output holds the values, and how to read them off
# it, (1, H_kv, T, d), written out here apart from hf/heads.py's own reading
VALUE_HOOKS: dict[str, tuple[str, Any]] = {
    "bloom": ("self_attention.query_key_value",
              lambda o, a: o.view(1, -1, a.num_heads, 3, a.head_dim)[:, :, :, 2].transpose(1, 2)),
    "gpt_neo": ("attn.attention.v_proj", lambda o, a: o.view(1, -1, a.num_heads, a.head_dim)
                .transpose(1, 2)),
    "mpt": ("attn.Wqkv", lambda o, a: o[..., 2 * a.hidden_size :]
            .reshape(1, -1, a.n_heads, a.head_dim).transpose(1, 2)),
    "falcon": ("self_attention.query_key_value", _falcon),
    "xglm": ("self_attn.v_proj", lambda o, a: o.view(1, -1, a.num_heads, a.head_dim)
             .transpose(1, 2)),
    "deberta": ("attention.self.in_proj", lambda o, a: (
        o.view(1, -1, a.num_attention_heads, 3, a.attention_head_size)[:, :, :, 2]
        + a.v_bias.view(a.num_attention_heads, -1)).transpose(1, 2)),
    "deberta-v2": ("attention.self.value_proj", lambda o, a: o.view(
        1, -1, a.num_attention_heads, a.attention_head_size).transpose(1, 2)),
    "roformer": ("attention.self.value", lambda o, a: o.view(
        1, -1, a.num_attention_heads, a.attention_head_size).transpose(1, 2)),
    "mpnet": ("attention.attn.v", lambda o, a: o.view(
        1, -1, a.num_attention_heads, a.attention_head_size).transpose(1, 2)),
}  # fmt: skip


def _values_by_hooks(hf: HFLens) -> dict[tuple[Kind, int], torch.Tensor]:
    """Each layer's values (H_kv, K, d) as an eager-only model's projections produced them."""
    model = hf.model
    ending, read = VALUE_HOOKS[model.config.model_type]
    modules = [(p, m) for p, m in model.named_modules() if p.endswith(ending)]
    parent = ending.rsplit(".", 1)[0]
    seen: list[torch.Tensor] = []
    hooks = []
    for path, module in modules:
        attn = model.get_submodule(path[: -len(ending)] + parent)
        hooks.append(module.register_forward_hook(
            lambda _m, _i, o, a=attn: seen.append(read(o, a)[0])))  # fmt: skip
    try:
        with torch.inference_mode():
            model(**inputs(hf))
    finally:
        for hook in hooks:
            hook.remove()
    return {(hf.info.kinds[0], layer): v for layer, v in enumerate(seen)}


def _values_by_calls(hf: HFLens) -> dict[tuple[Kind, int], torch.Tensor]:
    """Each layer's values as its attention call received them."""
    twin = kernel_twin(hf.model, "attnlens_values_test")
    with torch.inference_mode():
        out = twin(**inputs(hf), output_attentions=True)
    fields = {
        "encoder_self": ("encoder_attentions", "attentions"),
        "decoder_self": ("decoder_attentions", "attentions"),
        "cross": ("cross_attentions",),
    }
    got = {}
    for kind in hf.info.kinds:
        layers = next(getattr(out, f) for f in fields[kind] if getattr(out, f, None) is not None)
        got |= {(kind, layer): v for layer, v in enumerate(layers)}
    return got  # fmt: skip


def _outputs_by_hooks(hf: HFLens) -> dict[tuple[Kind, int], torch.Tensor]:
    """Each attention's heads' outputs side by side, (Q, H·d), as W^O's own input."""
    found = output_weights(hf.model, hf.model.config.model_type, hf.info).modules
    calls: dict[int, list[torch.Tensor]] = {}
    hooks = [m.register_forward_pre_hook(lambda m, i: calls.setdefault(id(m), []).append(i[0][0]))
             for m in {id(m): m for m in found.values()}.values()]  # fmt: skip
    try:
        with torch.inference_mode():
            hf.model(**inputs(hf))
    finally:
        for hook in hooks:
            hook.remove()
    shared = len({id(m) for m in found.values()}) < len(found)
    return {key: calls[id(m)][key[1] if shared else 0] for key, m in found.items()}


def assert_norms_as_seen(hf: HFLens, norms: dict[str, HeadNorms]) -> None:
    """‖f_h(xⱼ)‖ against ‖W_O^h v‖ multiplied out, v as the attention call received it (or, in
    eager-only models, as their value projection's hook saw it); ‖W_O^h o_{h,i}‖ against o as
    W^O's forward pre-hook saw it."""
    model_type = hf.model.config.model_type
    projected = output_weights(hf.model, model_type, hf.info)
    values = _values_by_hooks(hf) if model_type in EAGER_VALUES else _values_by_calls(hf)
    outputs = _outputs_by_hooks(hf)
    for (kind, layer), (weight, _) in projected.found.items():
        H = norms[kind].carried.shape[1]
        w = head_slices(weight, H).double()  # (H, d_model, d)
        v, o = values[kind, layer].double(), outputs[kind, layer].double()  # (H_kv, K, d), (Q, H·d)
        o = o.view(o.size(0), H, -1).transpose(0, 1)  # (H, Q, d)
        group = H // v.size(0)
        carried = torch.stack([(v[h // group] @ w[h].T).norm(dim=-1) for h in range(H)])
        written = torch.stack([(o[h] @ w[h].T).norm(dim=-1) for h in range(H)])
        for got, want in (
            (norms[kind].carried[layer], carried),
            (norms[kind].written[layer], written),
        ):
            gap = float((torch.from_numpy(got).double() - want).abs().max())
            assert gap <= 1e-5 * max(1.0, float(want.abs().max())), (kind, layer, gap)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_the_norms_equal_what_the_calls_and_hooks_saw(name: str) -> None:
    hf = lens(name)
    model_type = hf.model.config.model_type
    assert_norms_as_seen(hf, head_norms(hf.model, model_type, hf.info, inputs(hf)))


@pytest.mark.parametrize("record", ["weights", "scores"])
@pytest.mark.parametrize("name", ["gpt2", "llama", "bert", "bloom"])
def test_a_traces_norms_equal_what_the_calls_and_hooks_saw(name: str, record: str) -> None:
    """Through the Trace: the norms its own capture took (scores), or its second pass (weights;
    BLOOM, eager only, always); α ‖f‖ of a tile is the weight times the key's norm."""
    hf = lens(name)
    trace = hf.trace(TEXT, record=record)  # type: ignore[arg-type]
    assert trace.norms is not None and trace.norms_missing is None
    assert_norms_as_seen(hf, trace.norms)
    kind = trace.kinds[0]
    tile = trace.head(kind, 1, 1, slice(2, 6), slice(0, 5), measure="norm")
    want = trace.head(kind, 1, 1, slice(2, 6), slice(0, 5)) * trace.norms[kind].carried[1, 1, :5]
    np.testing.assert_allclose(tile, want, rtol=1e-6)
    for back in (Trace.from_npz(trace.to_npz()), Trace.from_json(trace.to_json())):
        assert back.equals(trace) and back.norms is not None


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert", "bart", "t5", "albert"])
def test_each_call_takes_its_own_layers_norms(name: str) -> None:
    """A trace's attention calls take their layer's norms while they run, so that the pass holds
    no values or heads' outputs: each call's module tells its layer (T5's and BART's self- and
    cross-attention apart). ALBERT's layers share one W^O, which tells no layer: its calls hold
    what they read and wrote, and the norms are taken after the pass, the same either way."""
    hf = lens(name)
    with torch.inference_mode():
        out = tracing.forward(hf.runner, True, **inputs(hf))
    only: Kind = "encoder_self" if hf.info.architecture == "encoder" else "decoder_self"
    fields: dict[str, Kind] = {
        "encoder_attentions": "encoder_self",
        "cross_attentions": "cross",
        "decoder_attentions": "decoder_self",
        "attentions": only,
    }
    captured = {kind: list(getattr(out, f)) for f, kind in fields.items() if getattr(out, f, None)}
    layers = [x for got in captured.values() for x in got]
    assert set(captured) == set(hf.info.kinds) and all(isinstance(x, CapturedHeads) for x in layers)
    in_call = [isinstance(x.heads, tuple) for x in layers]
    assert all(in_call) if name != "albert" else not any(in_call)
    heads = {kind: [x.heads for x in got] for kind, got in captured.items()}
    with torch.inference_mode():
        norms, missing = trace_norms(hf.model, hf.info, heads, {})  # type: ignore[arg-type]
    assert norms is not None, missing
    assert_norms_as_seen(hf, norms)


def test_norms_a_call_cannot_take_leave_the_trace_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A W^O the norms cannot use (here: every layer refused as a crafted folder's would be)
    fails neither the call nor the pass: the trace keeps its scores and says why it has no
    norms."""
    from attnlens.model.lenses.hf import norms as module

    def refused(*args: object) -> None:
        raise ValueError("W^O reads 7 inputs, which do not split into 4 heads")

    monkeypatch.setattr(module, "layer_norms", refused)
    trace = lens("gpt2").trace(TEXT, record="scores")
    assert trace.scores is not None and trace.norms is None
    assert trace.norms_missing == (
        "attnlens cannot take this model's values: W^O reads 7 inputs, which do not split into "
        "4 heads"
    )


def test_an_eager_architecture_not_stated_has_no_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    from attnlens.model.lenses.hf import heads as module

    monkeypatch.delitem(module.EAGER_VALUES, "bloom")
    hf = lens("bloom")
    with pytest.raises(HeadsError, match="does not know where its values are computed"):
        forward_heads(hf.model, "bloom", hf.info, inputs(hf))


def test_parts_come_back_by_value() -> None:
    """The private copy's kernel hands LayerHeads back; the shared model is never switched."""
    hf = lens("llama")
    run = forward_heads(hf.model, "llama", hf.info, inputs(hf))
    assert all(isinstance(p, LayerHeads) for p in run.heads["decoder_self"])
    assert hf.model.config._attn_implementation == "eager"
    assert run.heads["decoder_self"][0].values.shape[0] == hf.model.config.num_key_value_heads
