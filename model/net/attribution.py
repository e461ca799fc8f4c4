"""Direct logit attribution on our own decoders (§3.1: post-norm, every sublayer in Add & Norm,
no final norm): each part of one position's residual stream carried through every LayerNorm
after it, its mean and scale frozen, then the tied pre-softmax projection (§3.4).

The forward pass is walked here sublayer by sublayer with the model's own modules, keeping the
parts of the one position asked about; the walk's last states and logits must be the model's
own (`decode`), and every frozen norm must give what the norm gave, or it refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from attnlens.model.net.attention import KV, Attended, MultiHeadAttention
from attnlens.model.net.contributions import head_outputs, head_slices, head_vectors
from attnlens.model.net.decoder_only import CausalLayer, DecoderOnlyTransformer
from attnlens.model.net.layers import AddNorm
from attnlens.model.net.masks import causal_mask, padding_mask
from attnlens.model.net.stream import MismatchError, Shape, Stream, attribution
from attnlens.model.net.transformer import Transformer
from attnlens.record.attribution import LogitAttribution

FROZEN = "every sublayer's LayerNorm (post-norm, §3.1), each with its mean and scale frozen"


def _attend(
    stream: Stream,
    mha: MultiHeadAttention,
    x: torch.Tensor,
    kv: KV,
    mask: torch.Tensor,
    at: int,
    label: tuple[str, int],
) -> torch.Tensor:
    """One attention sublayer on x (1, T, d_model): its output (1, T, d_model), each head's part
    at position `at` and W^O's bias added to the stream, labelled (kind, layer)."""
    att: Attended = mha(x, kv, mask, keep_qkv=True)
    assert att.qkv is not None, "keep_qkv returns the values"
    heads = head_outputs(att.weights[0, :, at : at + 1], att.qkv.v[0])  # (h, 1, d_k)
    parts = head_vectors(head_slices(mha.w_o.weight, mha.h), heads)[:, 0]  # (h, d_model)
    kind, layer = label
    stream.add([("head", kind, layer, h) for h in range(mha.h)], parts)
    stream.add([("bias", "attention output")], mha.w_o.bias)
    output: torch.Tensor = att.output
    return output


def _add_norm(
    stream: Stream, sub: nn.Module, x: torch.Tensor, out: torch.Tensor, at: int, what: str
) -> torch.Tensor:
    """§3.1 LayerNorm(x + sublayer output), the stream carried through it frozen."""
    assert isinstance(sub, AddNorm), "each sublayer is wrapped in Add & Norm"
    y: torch.Tensor = sub(x, out)  # (1, T, d_model)
    norm = sub.norm
    stream.layer_norm(norm.weight, norm.bias, norm.eps, y[0, at], what)
    return y


def _feed_forward(
    stream: Stream, feed_forward: nn.Module, x: torch.Tensor, at: int, i: int
) -> torch.Tensor:
    """§3.3's feed-forward sublayer: its output, added to the stream as the layer's MLP part."""
    out: torch.Tensor = feed_forward(x)  # (1, T, d_model)
    stream.add([("mlp", i)], out[0, at])
    return out


@torch.inference_mode()
def causal_attribution(
    net: DecoderOnlyTransformer,
    ids: Sequence[int],
    at: int,
    token: int,
    described: dict[str, object],
) -> LogitAttribution:
    """The logit of `token` at position `at` of ids (the start token first) split into parts."""
    tokens = torch.tensor([list(ids)], device=net.generator.weight.device)  # (1, T)
    mask = causal_mask(tokens.size(1), 0, tokens.device)  # (1, T, T)
    x = net.tgt_embed(tokens) + net.positional(0, tokens.size(1))  # (1, T, d_model)
    stream = Stream(("embeddings",), x[0, at])
    for i, layer in enumerate(net.layers):
        assert isinstance(layer, CausalLayer), "a decoder-only model's layers are causal"
        out = _attend(stream, layer.self_attn, x, layer.self_attn.project_kv(x), mask, at,
                      ("decoder_self", i))  # fmt: skip
        x = _add_norm(stream, layer.sublayer[0], x, out, at, f"layer {i}'s first Add & Norm")
        out = _feed_forward(stream, layer.feed_forward, x, at, i)
        x = _add_norm(stream, layer.sublayer[1], x, out, at, f"layer {i}'s second Add & Norm")
    own = net.decode(tokens, mask).hidden  # (1, T, d_model): the model's own forward
    c = net.config
    shape = Shape({"decoder_self": (c.N, c.h)}, c.N)
    return _finish(net.generator, x, own, at, token, stream, shape, described)


@torch.inference_mode()
def seq2seq_attribution(
    net: Transformer,
    src: Sequence[int],
    ids: Sequence[int],
    at: int,
    token: int,
    described: dict[str, object],
) -> LogitAttribution:
    """The logit of `token` at decoder position `at` of ids (the start token first), reading
    the source src, split into parts: decoder self-attention and cross-attention heads."""
    device = net.generator.weight.device
    source, tokens = (
        torch.tensor([list(src)], device=device),
        torch.tensor([list(ids)], device=device),
    )
    src_mask = padding_mask(source, -1)  # (1, 1, S): every source position is real
    tgt_mask = causal_mask(tokens.size(1), 0, device)  # (1, T, T)
    memory_kv = net.memory_kv(net.encode(source, src_mask).memory)
    x = net.tgt_embed(tokens) + net.positional(0, tokens.size(1))  # (1, T, d_model)
    stream = Stream(("embeddings",), x[0, at])
    for i, layer in enumerate(net.decoder_layers()):
        out = _attend(stream, layer.self_attn, x, layer.self_attn.project_kv(x), tgt_mask, at,
                      ("decoder_self", i))  # fmt: skip
        x = _add_norm(
            stream, layer.sublayer[0], x, out, at, f"decoder layer {i}'s first Add & Norm"
        )
        out = _attend(stream, layer.src_attn, x, memory_kv[i], src_mask, at, ("cross", i))
        x = _add_norm(
            stream, layer.sublayer[1], x, out, at, f"decoder layer {i}'s second Add & Norm"
        )
        out = _feed_forward(stream, layer.feed_forward, x, at, i)
        x = _add_norm(
            stream, layer.sublayer[2], x, out, at, f"decoder layer {i}'s third Add & Norm"
        )
    own = net.decode(memory_kv, src_mask, tokens, tgt_mask).hidden  # (1, T, d_model)
    c = net.config
    shape = Shape({"decoder_self": (c.N, c.h), "cross": (c.N, c.h)}, c.N)
    return _finish(net.generator, x, own, at, token, stream, shape, described)


def _finish(
    generator: torch.nn.Linear,
    walked: torch.Tensor,
    own: torch.Tensor,
    at: int,
    token: int,
    stream: Stream,
    shape: Shape,
    described: dict[str, object],
) -> LogitAttribution:
    """The record, once the walk is shown to be the model's own forward pass."""
    if not torch.equal(walked, own):
        raise MismatchError(
            "walking the layers one sublayer at a time did not give the model's own states"
        )
    logits = generator(own[0, at]).double()  # (V,): the model's own
    own_logit = float(logits[token])
    logprob = own_logit - float(torch.logsumexp(logits, 0))
    bias = float(generator.bias[token])
    return attribution(stream, generator.weight[token], bias, (own_logit, logprob), shape,
                       {"frozen": FROZEN, "position": at, **described})  # fmt: skip
