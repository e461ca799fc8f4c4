"""The norms of what each head of our own models carries and writes (record/norms.py): the values
each layer's attention used (Q, K, V by return value) through each head's own slice of W^O."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from attnlens.model.net.attention import QKV, MultiHeadAttention
from attnlens.model.net.contributions import head_outputs, layer_norms
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Kind, Trace

Inputs = Callable[[Trace, Kind, int], tuple[QKV, np.ndarray]]  # OwnLens.attention_inputs


def attention_module(net: nn.Module, kind: Kind, layer: int) -> MultiHeadAttention:
    """The multi-head attention of one kind and layer: the encoder's, the decoder's self- or
    cross-attention (src_attn), or a decoder-only stack's."""
    stack: Any = getattr(net, "encoder" if kind == "encoder_self" else "decoder", None)
    if kind == "decoder_self" and hasattr(net, "layers"):
        stack = net.layers
    found = getattr(stack[layer], "src_attn" if kind == "cross" else "self_attn")
    assert isinstance(found, MultiHeadAttention), f"{kind} layer {layer}: {type(found).__name__}"
    return found


@torch.inference_mode()
def own_norms(net: nn.Module, trace: Trace, inputs: Inputs) -> dict[str, HeadNorms]:
    """Every kind's HeadNorms of a trace of its weights: values as each layer used them, each
    head's output Σⱼ αᵢⱼ v_j from the trace's own weights, as §3.2.1 mixes them."""
    out: dict[str, HeadNorms] = {}
    for kind in trace.kinds:
        weights = trace.attention(kind)
        assert weights is not None, "our models trace every head's weights"
        carried, written = [], []
        for layer in range(weights.shape[0]):
            values = inputs(trace, kind, layer)[0].v[0]  # (H, K, d_k)
            alpha = torch.from_numpy(np.ascontiguousarray(weights[layer])).to(values.device)
            w_o = attention_module(net, kind, layer).w_o.weight
            c, w = layer_norms(w_o, values, head_outputs(alpha, values))
            carried.append(c)
            written.append(w)
        out[kind] = HeadNorms(
            carried=torch.stack(carried).float().cpu().numpy(),  # (L, H, K)
            written=torch.stack(written).float().cpu().numpy(),  # (L, H, Q)
        )
    return out
