"""Models with sharp heads: scores of ±40 and more, where a head's weight sits on one key to within
e^-40, so that a proof by a sum is not carried by near-uniform random heads alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from attnlens.model.net.attention import MultiHeadAttention
from attnlens.record.scores import LayerScores

SHARP = 40.0  # the scores a sharp test must reach


def sharpen(net: torch.nn.Module, factor: float) -> torch.nn.Module:
    """Our model with every attention's queries (W^Q and its bias) times factor, in place."""
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, MultiHeadAttention):
                module.w_q.weight.mul_(factor)
                module.w_q.bias.mul_(factor)
    return net


def largest_score(layers: tuple[LayerScores, ...]) -> float:
    """The largest |score| any head gives any key it may attend to."""
    best = 0.0
    for layer in layers:
        H, Q, K = layer.shape
        allowed = layer.mask.allowed(np.arange(Q), np.arange(K))
        for h in range(H):
            s = layer.q[h] @ layer.k[layer.key_head(h)].T * layer.scale  # (Q, K)
            best = max(best, float(np.abs(s if allowed is None else s[allowed]).max()))
    return best


def sharp_hf_folder(source: Path, folder: Path, factor: float, pattern: str) -> Path:
    """A copy of a Hugging Face model folder whose query projections are times factor: every
    tensor whose name contains `pattern` ("q_proj", "query."); GPT-2's fused c_attn, whose first
    third of columns make the queries, by its name."""
    shutil.copytree(source, folder)
    weights = load_file(folder / "model.safetensors")
    for name, tensor in weights.items():
        if name.endswith(("c_attn.weight", "c_attn.bias")):
            width = tensor.shape[-1] // 3
            tensor[..., :width].mul_(factor)  # Conv1D: (in, 3 · out), queries first
        elif pattern in name:
            tensor.mul_(factor)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder
