"""What each head carries and writes (Kobayashi et al. 2020), proven on our models by the sum it
must make and against an independent computation: Σ_h Σⱼ αᵢⱼ f_h(xⱼ) + b_O is each attention's
output as the model computed it, and the norms equal ‖W_O^h v‖ and ‖W_O^h o‖ taken from what
hooks on W^V and W^O saw (hooks in tests only), on random heads and on sharp ones (scores ±40)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

from attnlens.model.net import contributions as c
from attnlens.model.net.attention import QKV, MultiHeadAttention
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.masks import causal_mask, padding_mask
from attnlens.model.net.transformer import Transformer
from attnlens.record.scores import LayerScores, MaskRule
from helpers.sharp import SHARP, sharpen
from helpers.tiny import tiny_transformer


def test_the_factor_of_a_slice_keeps_every_norm() -> None:
    """Exactly in float64; in float32 (what a trace computes) to float32's own precision."""
    torch.manual_seed(0)
    w_o = torch.randn(24, 4 * 6)  # d_model 24, 4 heads of 6
    x = torch.randn(4, 50, 6)
    direct = (c.head_slices(w_o, 4).double() @ x.double().transpose(-1, -2)).norm(dim=1)
    factors = c.head_factors(c.head_slices(w_o, 4))
    assert torch.allclose(c.norms_through(factors, x.double()), direct, rtol=1e-12, atol=0)
    got = c.norms_through(factors, x)  # (4, 50)
    assert got.dtype == torch.float32 and torch.allclose(got.double(), direct, rtol=2e-6)


def test_a_rank_deficient_head_is_factored_too() -> None:
    """A pruned head (W_O^h zero) and one of rank 2 have no Cholesky factor of their Gram
    matrix: their R comes from a QR instead, and every norm still holds (here 0 for the
    pruned head), the other heads' factors untouched by the fallback."""
    torch.manual_seed(3)
    w_o = torch.randn(24, 4 * 6)
    w_o[:, 6:12] = 0.0  # head 1 pruned
    w_o[:, 12:18] = torch.randn(24, 2) @ torch.randn(2, 6)  # head 2 of rank 2
    slices = c.head_slices(w_o, 4)
    factors = c.head_factors(slices)
    x = torch.randn(4, 30, 6).double()
    direct = (slices.double() @ x.transpose(-1, -2)).norm(dim=1)
    got = c.norms_through(factors, x)
    assert torch.allclose(got, direct, rtol=1e-9, atol=1e-12)
    assert torch.equal(got[1], torch.zeros(30, dtype=torch.float64))
    alone = c.head_factors(slices[[0, 3]])
    assert torch.equal(factors[[0, 3]], alone)


def test_grouped_heads_read_their_value_head_through_their_own_slice() -> None:
    """Under grouped-query attention query head h reads value head h // (H / H_kv), but writes
    through its own W_O^h: 6 query heads on 2 value heads."""
    torch.manual_seed(1)
    w_o, x = torch.randn(16, 6 * 4), torch.randn(2, 9, 4).double()
    slices = c.head_slices(w_o, 6)
    got = c.norms_through(c.head_factors(slices), x)
    vectors = c.head_vectors(slices, x)  # (6, 9, 16)
    for h in range(6):
        want = (slices[h].double() @ x[h // 3].double().T).T  # (9, 16)
        assert torch.allclose(vectors[h], want, rtol=1e-12)
        assert torch.allclose(got[h], want.norm(dim=-1), rtol=1e-12)


def test_norms_are_taken_a_block_of_positions_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(2)
    factors = c.head_factors(c.head_slices(torch.randn(8, 2 * 4), 2))
    x = torch.randn(1, 23, 4)
    whole = c.norms_through(factors, x)
    monkeypatch.setattr(c, "ROWS", 5)
    assert torch.equal(c.norms_through(factors, x), whole)


def test_shapes_that_do_not_split_are_refused() -> None:
    with pytest.raises(ValueError, match="do not split into 3 heads"):
        c.head_slices(torch.zeros(8, 8), 3)
    with pytest.raises(ValueError, match="4 query heads do not share 3 value heads"):
        c.norms_through(torch.zeros(4, 2, 2), torch.zeros(3, 5, 2))


def _attentions(net: torch.nn.Module) -> Iterator[tuple[str, MultiHeadAttention]]:
    for name, module in net.named_modules():
        if isinstance(module, MultiHeadAttention):
            yield name, module


def _run(net: torch.nn.Module) -> dict[str, tuple[QKV, torch.Tensor, torch.Tensor]]:
    """Every attention's Q, K, V and weights as the layers returned them, and its output as
    W^O's forward hook saw it (tests only), on one fixed input."""
    seen: dict[str, torch.Tensor] = {}
    hooks = [m.w_o.register_forward_hook(lambda _m, _i, out, n=n: seen.__setitem__(n, out))
             for n, m in _attentions(net)]  # fmt: skip
    vocab = net.config.tgt_vocab
    tokens = torch.tensor([[1, *range(4, min(vocab, 15)), 4, 5, 6]])  # (1, T) a repeat in it
    T = tokens.size(1)
    try:
        with torch.inference_mode():
            if isinstance(net, DecoderOnlyTransformer):
                out = net.decode(tokens, causal_mask(T, 0), keep_qkv=True)
                kept = {"decoder_self": (out.qkv, out.self_attention)}
            else:
                assert isinstance(net, Transformer)
                src_mask = padding_mask(tokens, -1)
                enc = net.encode(tokens, src_mask, keep_qkv=True)
                dec = net.decode(net.memory_kv(enc.memory), src_mask, tokens[:, :6],
                                 causal_mask(6, 0), keep_qkv=True)  # fmt: skip
                kept = {
                    "encoder": (enc.qkv, enc.attention),
                    "decoder_self": (dec.self_qkv, dec.self_attention),
                    "cross": (dec.cross_qkv, dec.cross_attention),
                }
    finally:
        for hook in hooks:
            hook.remove()
    seq2seq = isinstance(net, Transformer)
    names = {
        "encoder": "encoder.{}.self_attn",
        "cross": "decoder.{}.src_attn",
        "decoder_self": "decoder.{}.self_attn" if seq2seq else "layers.{}.self_attn",
    }
    return {
        names[kind].format(i): (qkv, weights[i, 0], seen[names[kind].format(i)][0])
        for kind, (qkvs, weights) in kept.items()
        for i, qkv in enumerate(qkvs)
    }


def _nets() -> list[torch.nn.Module]:
    """A random encoder-decoder and a random decoder-only model of the same sizes."""
    net = tiny_transformer(seed=3)
    torch.manual_seed(3)
    return [net, DecoderOnlyTransformer(net.config).eval()]


@pytest.mark.parametrize("sharp", [False, True])
@pytest.mark.parametrize("which", [0, 1])
def test_heads_weighted_what_they_carry_sum_to_the_layers_own_output(
    which: int, sharp: bool
) -> None:
    net = _nets()[which]
    if sharp:
        sharpen(net, 200.0)
    reached = 0.0
    for name, (qkv, weights, output) in _run(net).items():
        mha = net.get_submodule(name)
        assert isinstance(mha, MultiHeadAttention)
        f = c.head_vectors(c.head_slices(mha.w_o.weight.detach(), mha.h), qkv.v[0])  # (h, K, d)
        mixed = torch.einsum("hqk,hkd->qd", weights.double(), f) + mha.w_o.bias.double()
        assert torch.allclose(
            mixed, output.double(), rtol=0, atol=1e-5 * max(1.0, float(output.abs().max()))
        )
        scores = qkv.q[0] @ qkv.k[0].transpose(-1, -2) / qkv.q.size(-1) ** 0.5
        reached = max(reached, float(scores.abs().max()))
    assert (reached >= SHARP) == sharp, reached


@pytest.mark.parametrize("sharp", [False, True])
def test_the_norms_equal_what_hooks_on_w_v_and_w_o_give(sharp: bool) -> None:
    """‖f_h(xⱼ)‖ against ‖W_O^h v‖ with v from W^V's own output, and ‖W_O^h o_{h,i}‖ against o
    from W^O's own input, each multiplied out in full (no factoring)."""
    net = tiny_transformer(seed=4)
    if sharp:
        sharpen(net, 200.0)
    values: dict[str, torch.Tensor] = {}
    inputs: dict[str, torch.Tensor] = {}
    hooks = []
    for name, mha in _attentions(net):
        hooks.append(
            mha.w_v.register_forward_hook(lambda _m, _i, o, n=name: values.__setitem__(n, o))
        )
        hooks.append(
            mha.w_o.register_forward_pre_hook(lambda _m, i, n=name: inputs.__setitem__(n, i[0]))
        )
    try:
        kept = _run(net)
    finally:
        for hook in hooks:
            hook.remove()
    for name, (qkv, weights, _) in kept.items():
        mha = net.get_submodule(name)
        assert isinstance(mha, MultiHeadAttention)
        w = mha.w_o.weight.detach().double()
        carried, written = c.layer_norms(
            mha.w_o.weight.detach(), qkv.v[0], c.head_outputs(weights, qkv.v[0])
        )
        v = values[name][0].double().view(-1, mha.h, mha.d_k)  # (K, h, d_k): W^V's own output
        o = inputs[name][0].double().view(-1, mha.h, mha.d_k)  # (Q, h, d_k): W^O's own input
        for h in range(mha.h):
            span = slice(h * mha.d_k, (h + 1) * mha.d_k)
            want_c = (v[:, h] @ w[:, span].T).norm(dim=-1)
            want_w = (o[:, h] @ w[:, span].T).norm(dim=-1)
            assert torch.allclose(carried[h].double(), want_c, rtol=1e-5, atol=1e-7), (name, h)
            assert torch.allclose(written[h].double(), want_w, rtol=1e-5, atol=1e-7), (name, h)


def test_norms_of_a_scores_record_head_weigh_its_exact_weights() -> None:
    """HeadNorms.weighted multiplies each weight by what its key carries."""
    from attnlens.record.norms import HeadNorms

    rng = np.random.default_rng(0)
    layer = LayerScores(rng.normal(size=(2, 5, 4)).astype(np.float32),
                        rng.normal(size=(2, 5, 4)).astype(np.float32),
                        np.zeros((2, 5), np.float32), 0.5, MaskRule(True))  # fmt: skip
    norms = HeadNorms(rng.random((1, 2, 5)).astype(np.float32), np.zeros((1, 2, 5), np.float32))
    cols = np.arange(5)
    tile = layer.weights(1)
    got = norms.weighted(0, 1, tile, cols)
    assert np.allclose(got, tile * norms.carried[0, 1][None, :])


def test_kept_factors_are_taken_once_and_again_when_the_weight_changes() -> None:
    """A model's W^O is factored by its first trace and the factors reused by the next; a
    weight changed in place, or another tensor under the same layer, is factored again."""
    torch.manual_seed(4)
    w_o = torch.randn(24, 4 * 6)
    kept = c.KeptFactors()
    first = kept.of(("decoder_self", 0), w_o, 4)
    assert torch.equal(first, c.head_factors(c.head_slices(w_o, 4)))
    assert kept.of(("decoder_self", 0), w_o, 4) is first
    assert kept.of(("decoder_self", 1), w_o.T.contiguous().T, 4) is not first
    with torch.no_grad():
        w_o[:, :6] *= 2.0  # head 0's slice doubled in place
    again = kept.of(("decoder_self", 0), w_o, 4)
    assert again is not first
    assert torch.allclose(again[0].abs(), 2 * first[0].abs(), rtol=1e-12)
    assert torch.equal(again[1:], first[1:])
    assert kept.of(("decoder_self", 0), w_o, 2).shape == (2, 12, 12)
