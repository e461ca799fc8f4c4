"""The norms of what each head of a Hugging Face model carries and writes (record/norms.py), from
the values its attention received and its heads' outputs (hf/heads.py), through each head's own
slice of W^O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import torch
from transformers import PreTrainedModel

from attnlens.model.lenses.hf.capture import UnexpressibleError
from attnlens.model.lenses.hf.heads import HeadsError, forward_heads, output_weights
from attnlens.model.net.contributions import layer_norms
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Kind, ModelInfo


class Read(Protocol):
    """One layer's heads as their attention call received and returned them."""

    @property
    def values(self) -> torch.Tensor: ...  # (H_kv, K, d_head)
    @property
    def output(self) -> torch.Tensor: ...  # (H, Q, d_head)


def norms_of(
    model: PreTrainedModel, model_type: str, info: ModelInfo, heads: Mapping[Kind, Sequence[Read]]
) -> dict[Kind, HeadNorms]:
    """Every kind's HeadNorms of what one forward pass's heads read and wrote."""
    projected = output_weights(model, model_type, info)
    out: dict[Kind, HeadNorms] = {}
    for kind, layers in heads.items():
        pairs = [
            layer_norms(projected.weight(kind, i), p.values, p.output) for i, p in enumerate(layers)
        ]
        out[kind] = HeadNorms(
            carried=torch.stack([c for c, _ in pairs]).float().cpu().numpy(),  # (L, H, K)
            written=torch.stack([w for _, w in pairs]).float().cpu().numpy(),  # (L, H, Q)
        )
    return out


def head_norms(
    model: PreTrainedModel, model_type: str, info: ModelInfo, inputs: Mapping[str, Any]
) -> dict[Kind, HeadNorms]:
    """Every kind's HeadNorms for one input (a batch of one), by a private copy's forward pass."""
    run = forward_heads(model, model_type, info, inputs, exact_weights=False)
    return norms_of(model, model_type, info, run.heads)


def trace_norms(
    model: PreTrainedModel,
    info: ModelInfo,
    captured: Mapping[Kind, Sequence[Read]] | None,
    inputs: Mapping[str, Any],
) -> tuple[dict[Kind, HeadNorms] | None, str | None]:
    """A trace's norms and, where they cannot be taken, why: from the values its own capture
    received (a record of scores), else by a private copy's pass over the same inputs."""
    model_type = model.config.model_type
    try:
        if captured is not None:
            return norms_of(model, model_type, info, captured), None
        return head_norms(model, model_type, info, inputs), None
    except (HeadsError, UnexpressibleError, ValueError) as why:
        return None, f"attnlens cannot take this model's values: {why}"
