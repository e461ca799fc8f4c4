"""One head's queries, keys and values for a traced input, by value (§3.2.1, §3.2.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.attention import MultiHeadAttention
from model.decoder_only import DecoderOnlyTransformer
from model.errors import InputError
from model.layers import EncoderLayer
from model.lens import Lens
from model.lm import LMLens
from model.masks import padding_mask, subsequent_mask
from model.seq2seq import Seq2SeqLens
from model.trace import Kind, Trace
from model.transformer import Transformer


@dataclass(frozen=True, eq=False)
class HeadProjections:
    """Q = x W^Q_i, K = m W^K_i, V = m W^V_i of one head, and the mask that layer applied."""

    kind: Kind
    layer: int
    head: int
    q: np.ndarray  # (T_q, d_k) float32
    k: np.ndarray  # (T_k, d_k) float32
    v: np.ndarray  # (T_k, d_k) float32
    mask: np.ndarray  # (T_q, T_k) bool: True = may attend


def head_projections(
    lens: Lens, trace: Trace, kind: Kind, layer: int, head: int
) -> HeadProjections:
    """Re-run `lens` on the tokens `trace` saw and return one head's Q, K, V at one layer."""
    if not isinstance(lens, Seq2SeqLens | LMLens):
        raise InputError(
            f"step-by-step attention needs one of attnlens' own models, not {lens.name}"
        )
    n_layers, n_heads = lens.info.n_layers, lens.info.n_heads
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise InputError(
            f"layer {layer}, head {head} does not exist: the model has layers 0-{n_layers - 1} "
            f"and heads 0-{n_heads - 1}"
        )
    index, pad = lens.tokenizer.index, lens.tokenizer.pad_id
    device = next(lens.net.parameters()).device
    tgt = torch.tensor([[index[t] for t in trace.tgt_tokens]], device=device)  # (1, T)
    if isinstance(lens, LMLens):
        if kind != "decoder_self":
            raise InputError(f"{lens.name} is decoder-only: it has decoder self-attention only")
        q, k, v, mask = _causal_qkv(lens.net, tgt, layer, pad)
    else:
        src = torch.tensor([[index[t] for t in trace.src_tokens]], device=device)  # (1, S)
        q, k, v, mask = _layer_qkv(lens.net, src, tgt, kind, layer, pad)
    return HeadProjections(
        kind, layer, head, _np(q[0, head]), _np(k[0, head]), _np(v[0, head]), mask
    )


QKV = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # (1, h, T, d_k) each


@torch.inference_mode()
def _layer_qkv(
    net: Transformer, src: torch.Tensor, tgt: torch.Tensor, kind: Kind, layer: int, pad: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray]:
    """Run the stacks up to `layer` and project its attention inputs: (1, h, T, d_k) ×3."""
    src_mask = padding_mask(src, pad)  # (1, 1, S)
    S, T = src.size(1), tgt.size(1)
    encoder = [layer_ for layer_ in net.encoder if isinstance(layer_, EncoderLayer)]
    x = net.src_embed(src) + net.positional(0, S)  # (1, S, d_model)
    for enc in encoder[: layer if kind == "encoder_self" else len(encoder)]:
        x = enc(x, src_mask)[0]
    if kind == "encoder_self":
        return (*_qkv(encoder[layer].self_attn, x, x), _bool(src_mask[0].expand(S, S)))
    memory_kv = net.memory_kv(x)
    tgt_mask = padding_mask(tgt, pad) & subsequent_mask(T, tgt.device)  # (1, T, T)
    y = net.tgt_embed(tgt) + net.positional(0, T)  # (1, T, d_model)
    decoder = net.decoder_layers()
    for i, dec in enumerate(decoder[:layer]):
        y = dec(y, memory_kv[i], src_mask, tgt_mask)[0]
    dec = decoder[layer]
    if kind == "decoder_self":
        return (*_qkv(dec.self_attn, y, y), _bool(tgt_mask[0]))
    y = dec.sublayer[0](y, dec.self_attn(y, dec.self_attn.project_kv(y), tgt_mask)[0])
    return (*_qkv(dec.src_attn, y, x), _bool(src_mask[0].expand(T, S)))  # x: the memory


@torch.inference_mode()
def _causal_qkv(
    net: DecoderOnlyTransformer, tokens: torch.Tensor, layer: int, pad: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray]:
    """A decoder-only stack up to `layer`, and that layer's self-attention projections."""
    T = tokens.size(1)
    mask = padding_mask(tokens, pad) & subsequent_mask(T, tokens.device)  # (1, T, T)
    y = net.tgt_embed(tokens) + net.positional(0, T)  # (1, T, d_model)
    for causal in list(net.layers)[:layer]:
        y = causal(y, mask)[0]
    attn = net.layers[layer].self_attn
    assert isinstance(attn, MultiHeadAttention)
    return (*_qkv(attn, y, y), _bool(mask[0]))


def _qkv(attn: MultiHeadAttention, x: torch.Tensor, m: torch.Tensor) -> QKV:
    """Queries from x, keys and values from m, split into heads: (1, h, T, d_k) each."""
    k, v = attn.project_kv(m)
    return attn.split_heads(attn.w_q(x)), k, v


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy().copy()


def _bool(t: torch.Tensor) -> np.ndarray:
    return t.cpu().numpy().astype(bool)
