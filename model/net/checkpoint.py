"""Saving and loading bundled models: safetensors weights plus a JSON description, no pickle."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_model, save_model
from torch import nn

from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import Tokenizer, tokenizer_from_dict
from attnlens.model.net.transformer import Transformer

WEIGHTS, DESCRIPTION = "model.safetensors", "config.json"


def save(
    folder: Path, net: nn.Module, tok: Tokenizer, meta: dict[str, Any], half: bool = False
) -> None:
    """Write folder/model.safetensors and folder/config.json (float16 weights when half)."""
    folder.mkdir(parents=True, exist_ok=True)
    save_model(copy.deepcopy(net).half() if half else net, str(folder / WEIGHTS))
    config: TransformerConfig = net.config  # type: ignore[assignment]
    description = {"transformer": config.to_dict(), "tokenizer": tok.to_dict(), **meta}
    (folder / DESCRIPTION).write_text(json.dumps(description, indent=2, sort_keys=True) + "\n")


def read_description(folder: Path) -> dict[str, Any]:
    path = folder / DESCRIPTION
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def load(
    folder: Path, device: torch.device, weights: Path | None = None
) -> tuple[Transformer, Tokenizer, dict[str, Any]]:
    """A model in eval mode, its tokenizer and its description, from a bundled folder."""
    description = read_description(folder)
    net = Transformer(TransformerConfig.from_dict(description["transformer"]))
    load_weights(net, weights or folder / WEIGHTS, device)
    return net, tokenizer_from_dict(description["tokenizer"]), description


def load_weights(net: nn.Module, path: Path, device: torch.device) -> None:
    """Fill net from a safetensors file (float32 or float16) and put it in eval mode on device."""
    if path.suffix != ".safetensors":
        raise ValueError(f"refusing to load {path}: only .safetensors weights are accepted")
    if _stored_half(path):
        probe = copy.deepcopy(net).half()
        load_model(probe, str(path), device="cpu")
        net.load_state_dict({k: v.float() for k, v in probe.state_dict().items()})
    else:
        load_model(net, str(path), device="cpu")
    net.to(device).eval()


def _stored_half(path: Path) -> bool:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        first = next(iter(f.keys()))
        return bool(f.get_slice(first).get_dtype() == "F16")
