"""Choosing where the model runs."""

from __future__ import annotations

import torch

from attnlens.record.errors import InputError


def pick_device(device: str = "auto") -> torch.device:
    """'auto' takes CUDA when there is one, else the CPU; 'cuda' without a GPU is an error."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise InputError(f"device must be auto, cpu or cuda, got {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device {device!r} was asked for but no CUDA GPU is available")
    return torch.device(device)
