"""The norms of what each head of a Hugging Face model carries and writes (record/norms.py), from
the values its attention received and its heads' outputs (hf/heads.py), through each head's own
slice of W^O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from transformers import PreTrainedModel

from attnlens.model.lenses.hf.heads import Forward, forward_heads, output_weights
from attnlens.model.net.contributions import layer_norms
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Kind, ModelInfo


def norms_of(
    model: PreTrainedModel, model_type: str, info: ModelInfo, run: Forward
) -> dict[Kind, HeadNorms]:
    """Every kind's HeadNorms of what one forward pass's heads read and wrote."""
    projected = output_weights(model, model_type, info)
    out: dict[Kind, HeadNorms] = {}
    for kind, layers in run.heads.items():
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
    return norms_of(model, model_type, info, forward_heads(model, model_type, info, inputs))
