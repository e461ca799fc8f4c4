"""The recorded attention is the attention that computed the output."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attnlens.model.net.masks import padding_mask, subsequent_mask, target_mask
from attnlens.model.net.transformer import Transformer
from helpers.tiny import tiny_transformer


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    src = torch.tensor([[4, 5, 6, 7, 2], [8, 9, 2, 0, 0]])  # (B, S): the second is padded
    tgt = torch.tensor([[1, 7, 6, 5, 4], [1, 9, 8, 0, 0]])  # (B, T)
    return src, tgt, padding_mask(src, 0), target_mask(tgt, 0)


def _recompute(
    layer_attn: torch.nn.Module, x_q: torch.Tensor, x_kv: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """softmax(QKᵀ/√d_k + mask) from the layer's own projections, written out independently."""
    h, d_model = layer_attn.h, x_q.size(-1)  # type: ignore[attr-defined]
    d_k = d_model // h
    q = F.linear(x_q, layer_attn.w_q.weight, layer_attn.w_q.bias)  # type: ignore[attr-defined]
    k = F.linear(x_kv, layer_attn.w_k.weight, layer_attn.w_k.bias)  # type: ignore[attr-defined]
    q = q.view(*q.shape[:2], h, d_k).permute(0, 2, 1, 3)
    k = k.view(*k.shape[:2], h, d_k).permute(0, 2, 1, 3)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_k)
    scores = scores + torch.where(mask.unsqueeze(1), 0.0, float("-inf"))
    return torch.softmax(scores, dim=-1)


def _plain_forward(
    net: Transformer,
    src: torch.Tensor,
    tgt: torch.Tensor,
    src_mask: torch.Tensor,
    tgt_mask: torch.Tensor,
) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    """The same network run without recording, through torch's fused attention; also returns
    each layer's inputs so the weights can be recomputed."""

    def mha(
        m: torch.nn.Module, xq: torch.Tensor, xkv: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        B, T, D = xq.shape

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(B, -1, m.h, D // m.h).transpose(1, 2)  # type: ignore[attr-defined]

        out = F.scaled_dot_product_attention(
            heads(m.w_q(xq)),
            heads(m.w_k(xkv)),
            heads(m.w_v(xkv)),  # type: ignore[attr-defined]
            attn_mask=mask.unsqueeze(1),
        )
        return m.w_o(out.transpose(1, 2).reshape(B, T, D))  # type: ignore[attr-defined, no-any-return]

    enc_inputs, dec_inputs = [], []
    x = net.src_embed(src) + net.pe[: src.size(1)]  # type: ignore[index]
    for layer in net.encoder:
        enc_inputs.append(x)
        x = layer.sublayer[0](x, mha(layer.self_attn, x, x, src_mask))
        x = layer.sublayer[1](x, layer.feed_forward(x))
    memory = x
    y = net.tgt_embed(tgt) + net.pe[: tgt.size(1)]  # type: ignore[index]
    for layer in net.decoder:
        y = layer.sublayer[0](y, mha(layer.self_attn, y, y, tgt_mask))
        dec_inputs.append(y)
        y = layer.sublayer[1](y, mha(layer.src_attn, y, memory, src_mask))
        y = layer.sublayer[2](y, layer.feed_forward(y))
    return net.log_probs(y), enc_inputs, dec_inputs + [memory]


def test_output_is_the_same_with_and_without_recording() -> None:
    net = tiny_transformer()
    src, tgt, src_mask, tgt_mask = _inputs()
    with torch.no_grad():
        recorded = net(src, tgt, src_mask, tgt_mask)
        plain, _, _ = _plain_forward(net, src, tgt, src_mask, tgt_mask)
    real = tgt != 0
    torch.testing.assert_close(recorded[real], plain[real], atol=1e-5, rtol=1e-5)


def test_recorded_weights_equal_an_independent_recomputation() -> None:
    net = tiny_transformer()
    src, tgt, src_mask, tgt_mask = _inputs()
    with torch.no_grad():
        encoded = net.encode(src, src_mask)
        decoded = net.decode(net.memory_kv(encoded.memory), src_mask, tgt, tgt_mask)
        _, enc_inputs, dec_inputs = _plain_forward(net, src, tgt, src_mask, tgt_mask)
        memory = dec_inputs[-1]
        for i, layer in enumerate(net.encoder):
            expected = _recompute(layer.self_attn, enc_inputs[i], enc_inputs[i], src_mask)
            torch.testing.assert_close(encoded.attention[i], expected, atol=1e-6, rtol=1e-5)
        for i, layer in enumerate(net.decoder):
            expected = _recompute(layer.src_attn, dec_inputs[i], memory, src_mask)
            torch.testing.assert_close(decoded.cross_attention[i], expected, atol=1e-6, rtol=1e-5)


def test_rows_sum_to_one_and_masked_entries_are_zero() -> None:
    net = tiny_transformer()
    src, tgt, src_mask, tgt_mask = _inputs()
    with torch.no_grad():
        encoded = net.encode(src, src_mask)
        decoded = net.decode(net.memory_kv(encoded.memory), src_mask, tgt, tgt_mask)
    for weights in (encoded.attention, decoded.self_attention, decoded.cross_attention):
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
    upper = ~subsequent_mask(tgt.size(1))[0]
    assert torch.all(decoded.self_attention[..., upper] == 0)
    assert torch.all(decoded.cross_attention[:, 1, :, :, 3:] == 0)  # padded source keys
    assert torch.all(encoded.attention[:, 1, :, :, 3:] == 0)


def test_cached_decoding_equals_the_full_pass() -> None:
    net = tiny_transformer()
    src, tgt, src_mask, _ = _inputs()
    src, tgt, src_mask = src[:1], tgt[:1], src_mask[:1]
    with torch.no_grad():
        memory_kv = net.memory_kv(net.encode(src, src_mask).memory)
        full = net.decode(memory_kv, src_mask, tgt, subsequent_mask(tgt.size(1)))
        cache = None
        for t in range(tgt.size(1)):
            step = net.decode(
                memory_kv,
                src_mask,
                tgt[:, t : t + 1],
                torch.ones(1, 1, t + 1, dtype=torch.bool),
                cache,
            )
            cache = step.cache
            torch.testing.assert_close(step.hidden[:, 0], full.hidden[:, t], atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(
                step.self_attention[:, :, :, 0],
                full.self_attention[:, :, :, t, : t + 1],
                atol=1e-6,
                rtol=1e-5,
            )
            torch.testing.assert_close(
                step.cross_attention[:, :, :, 0],
                full.cross_attention[:, :, :, t],
                atol=1e-6,
                rtol=1e-5,
            )


def test_embeddings_are_scaled_and_shared() -> None:
    net = tiny_transformer()
    tokens = torch.tensor([[4]])
    torch.testing.assert_close(
        net.src_embed(tokens)[0, 0], net.src_embed.lut.weight[4] * 4.0
    )  # √16
    assert net.generator.weight is net.src_embed.lut.weight is net.tgt_embed.lut.weight


def test_generator_gives_log_probabilities() -> None:
    net = tiny_transformer()
    out = net.log_probs(torch.randn(1, 3, 16))
    torch.testing.assert_close(out.exp().sum(-1), torch.ones(1, 3))
