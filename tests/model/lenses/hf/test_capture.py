"""Attention kept as what the kernel computed it from (record/scores.py), checked two ways on
every architecture of the zoo: each head's weights recomputed on demand equal the model's own
eager `output_attentions`, and Σⱼ pᵢⱼ vⱼ equals the attention output the kernel produced.
Where the capture cannot state a model's scores, the record is its eager weights and says why."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch
from transformers import AttentionInterface
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

from attnlens.model.lenses.hf.capture import capture_attention
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.twin import capture_twin
from attnlens.record.scores import LayerScores
from attnlens.record.trace import Trace
from helpers.hf_zoo import ZOO, zoo_folder
from helpers.parts import runs

CPU = torch.device("cpu")
TEXT = "the cat sat on the mat and the dog sat on the cat"


@functools.cache
def lens(name: str) -> HFLens:
    return HFLens(zoo_folder(name), CPU, name=name)


@functools.cache
def both(name: str) -> tuple[Trace, Trace]:
    return lens(name).trace(TEXT), lens(name).trace(TEXT, record="scores")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_scores_recompute_exactly_the_eager_weights(name: str) -> None:
    weights, scores = both(name)
    assert scores.kinds == weights.kinds
    if scores.scores is None:  # the capture could not state them: eager, and it says so
        said = [w for w in scores.warnings if w.startswith("recorded as eager weights")]
        assert said, f"{name}: neither scores nor a note saying why"
        return
    for kind in weights.kinds:
        eager = weights.attention(kind)
        assert eager is not None and getattr(scores, kind) is None
        recomputed = scores.attention(kind)
        assert np.abs(recomputed - eager).max() <= 1e-6, (name, kind)
        assert np.array_equal(scores.mask(kind), weights.mask(kind)), (name, kind)
    if weights.tgt_logprobs is not None:
        assert np.abs(scores.tgt_logprobs - weights.tgt_logprobs).max() <= 1e-5


def test_the_architectures_people_run_long_are_captured_not_eager() -> None:
    """Rotary (Llama, Qwen, Gemma, Phi), grouped-query attention, Mistral's and Starcoder2's
    sliding windows, Gemma 2's soft-capped logits with its alternating windows, learned
    positions (GPT-2, OPT), BERT-style encoders and the three kinds of BART-style models go
    through the kernel."""
    captured = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi", "starcoder2",
                "gpt2", "gptj", "gpt-neox", "opt", "bert", "roberta", "bart", "marian",
                "m2m100", "t5")  # fmt: skip
    for name in captured:
        _, scores = both(name)
        assert scores.scores is not None and set(scores.scores) == set(scores.kinds), name


@pytest.mark.parametrize(
    ("name", "why"),
    [("bloom", "does not go through transformers' attention functions")],
)  # fmt: skip
def test_what_the_record_cannot_state_is_recorded_as_eager_weights_saying_why(
    name: str, why: str
) -> None:
    weights, scores = both(name)
    assert scores.scores is None
    assert any(w.startswith("recorded as eager weights") and why in w for w in scores.warnings)
    for kind in weights.kinds:
        assert np.array_equal(scores.attention(kind), weights.attention(kind))


def _with_values(
    module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
    attention_mask: torch.Tensor | None, **kwargs: Any,
) -> tuple[torch.Tensor, tuple[LayerScores, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """capture_attention, also handing back the values and the kernel's output (tests only)."""
    out, scores = capture_attention(module, query, key, value, attention_mask, **kwargs)
    return out, (scores, value[0].detach().clone(), out[0].detach().clone())


AttentionInterface.register("attnlens_capture_test", _with_values)
ALL_MASK_ATTENTION_FUNCTIONS.register("attnlens_capture_test", sdpa_mask)  # CAPTURE's masks


@pytest.mark.parametrize(
    "name", ["llama", "mistral", "qwen2", "gemma2", "gpt2", "bert", "bart", "t5"]
)
def test_weights_times_values_give_the_kernels_own_output(name: str) -> None:
    model = capture_twin(lens(name).model)
    model.set_attn_implementation("attnlens_capture_test")
    ids = torch.tensor([runs(lens(name)).token_ids(TEXT)])  # (1, N)
    inputs: dict[str, Any] = {"input_ids": ids}
    if lens(name).architecture == "encoder-decoder":
        inputs["decoder_input_ids"] = ids[:, :7]
    with torch.inference_mode():
        out = model(**inputs, output_attentions=True)
    groups = [getattr(out, f, None) for f in ("attentions", "encoder_attentions",
                                             "decoder_attentions", "cross_attentions")]  # fmt: skip
    layers = [x for g in groups if g for x in g]
    assert layers
    if name == "gemma2":  # soft-capped, windowed on alternate layers: both stated, not dropped
        assert all(scores.softcap for scores, _, _ in layers)
        assert {scores.mask.window for scores, _, _ in layers} - {None}
    if name == "t5":  # a bias by distance in the self-attention of both stacks, none across
        biased = [scores.bias is not None for g in groups[1:] for scores, _, _ in g or ()]
        assert biased == [True] * (len(groups[1]) + len(groups[2])) + [False] * len(groups[3])
    for scores, value, kernel_out in layers:
        for h in range(scores.n_heads):
            p = scores.head(h)  # (Q, K)
            mixed = p @ value[scores.key_head(h)].float().numpy()  # (Q, d)
            got = kernel_out[:, h].float().numpy()  # (Q, d)
            assert np.abs(mixed - got).max() <= 1e-5 * max(1.0, np.abs(got).max()), name


def test_the_shared_model_is_never_switched() -> None:
    hf = lens("llama")
    before = hf.model.config._attn_implementation
    hf.trace(TEXT, record="scores")
    assert hf.model.config._attn_implementation == before == "eager"
    assert hf.trace(TEXT).decoder_self is not None  # eager weights, as before


@pytest.mark.parametrize("name", ["bart", "t5"])
def test_a_scores_record_reads_back_from_npz_and_json(name: str) -> None:
    _, scores = both(name)
    for back in (Trace.from_npz(scores.to_npz()), Trace.from_json(scores.to_json())):
        assert back.scores is not None and set(back.scores) == set(scores.scores or {})
        for kind in scores.kinds:
            assert np.array_equal(back.head(kind, 0, 1), scores.head(kind, 0, 1))
            was, now = (scores.scores or {})[kind][0].bias, back.scores[kind][0].bias
            assert (was is None and now is None) or np.array_equal(was, now)


def test_a_tile_is_the_same_as_the_whole_heads_slice() -> None:
    _, scores = both("mistral")
    head = scores.model.n_heads - 1
    whole = scores.head("decoder_self", 1, head)
    tile = scores.head("decoder_self", 1, head, slice(4, 9), slice(2, 7))
    assert np.array_equal(tile, whole[4:9, 2:7])
    assert (
        np.allclose(whole.sum(-1), 1, atol=1e-5)
        and (whole[np.triu_indices(len(whole), 1)] == 0).all()
    )


@pytest.mark.parametrize("window", [None, 5])
def test_off_the_cpus_flash_kernel_the_same_output_and_log_sum_exp(window: int | None) -> None:
    """The path a GPU takes (sdpa for the output, the log-sum-exp a block of rows at a time),
    run here on the CPU against the flash kernel's own."""
    from attnlens.model.lenses.hf import capture
    from attnlens.record.scores import MaskRule

    torch.manual_seed(0)
    q, k, v = torch.randn(1, 4, 40, 8), torch.randn(1, 2, 40, 8), torch.randn(1, 2, 40, 8)
    rule = MaskRule(True, window)
    ok = torch.from_numpy(rule.allowed(np.arange(40), np.arange(40)))
    mask = ok[None, None] if window else None
    flash = capture._kernel(q, k, v, mask, 0.3, rule)
    monkey = capture.MASK_ROWS
    capture.MASK_ROWS = 7  # several blocks of rows
    try:
        kk, vv = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
        additive = None if mask is None else capture._additive(mask, q.dtype)
        math = capture._math(q, kk, vv, additive, 0.3, rule)
    finally:
        capture.MASK_ROWS = monkey
    assert torch.allclose(flash[0], math[0], atol=1e-6) and torch.allclose(
        flash[1], math[1], atol=1e-5
    )


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
@pytest.mark.parametrize("name", ["llama", "mistral", "bart"])
def test_on_cuda_the_same_record_as_on_the_cpu(name: str) -> None:
    cuda = HFLens(zoo_folder(name), torch.device("cuda"), name=name)
    weights, _ = both(name)
    on_gpu = cuda.trace(TEXT, record="scores")
    assert on_gpu.scores is not None
    for kind in weights.kinds:
        assert np.abs(on_gpu.attention(kind) - weights.attention(kind)).max() <= 1e-5


def _bloom_layer(model: Any, layer: int, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Bloom's block `layer` on input x, its attention weights replaced by p (h, T, T)."""
    block = model.transformer.h[layer]
    attn, normed = block.self_attention, block.input_layernorm(x)
    _, _, value = attn._reshape(attn.query_key_value(normed))  # (1, h, T, d)
    mixed = (p @ value[0]).permute(1, 0, 2).reshape(1, x.shape[1], -1)  # Σⱼ pᵢⱼ vⱼ
    post = block.apply_residual_connection_post_layernorm
    after = attn.dense(mixed) + (normed if post else x)
    normed = block.post_attention_layernorm(after)
    return block.mlp(normed, normed if post else after)


def _gpt_neo_layer(model: Any, layer: int, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """GPT-Neo's block `layer` (global or local) on input x, its weights replaced by p."""
    block = model.transformer.h[layer]
    attn = block.attn.attention
    value = attn._split_heads(attn.v_proj(block.ln_1(x)), attn.num_heads, attn.head_dim)
    mixed = attn._merge_heads(p @ value, attn.num_heads, attn.head_dim)  # Σⱼ pᵢⱼ vⱼ
    after = attn.out_proj(mixed) + x
    return after + block.mlp(block.ln_2(after))


@pytest.mark.parametrize(
    ("name", "layer_out"), [("bloom", _bloom_layer), ("gpt-neo", _gpt_neo_layer)]
)
def test_eager_weights_times_values_give_each_layer_its_own_output(
    name: str, layer_out: Any
) -> None:
    """Bloom adds its ALiBi distance penalty, and GPT-Neo masks its local layers, inside their
    own attention code, which no attention function sees: their record is the eager weights.
    Those are still the weights that made the output: Σⱼ pᵢⱼ vⱼ, carried through the rest of
    each block by the block's own parts, gives that layer's output as the model computed it."""
    hf = lens(name)
    recorded = hf.trace(TEXT, record="scores")
    assert recorded.scores is None  # eager weights, with the note saying why (test above)
    weights = recorded.attention("decoder_self")  # (N, h, T, T)
    ids = torch.tensor([runs(hf).token_ids(TEXT)])
    model = hf.model
    blocks = len(model.transformer.h)
    assert weights is not None and len(weights) == blocks
    with torch.inference_mode():
        hidden = model(input_ids=ids, output_hidden_states=True).hidden_states
        for layer in range(blocks):
            x = hidden[layer]
            out = layer_out(model, layer, x, torch.from_numpy(weights[layer]).to(x.dtype))
            if layer == blocks - 1:
                out = model.transformer.ln_f(out)
            want = hidden[layer + 1]
            assert torch.allclose(out, want, atol=1e-5 * max(1.0, float(want.abs().max()))), layer
