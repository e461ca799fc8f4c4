"""Choosing where the model runs: a CUDA GPU when asked for (or, with 'auto', when there is one),
else the CPU."""

from __future__ import annotations

import re

import torch

from attnlens.record.errors import InputError

_CUDA = re.compile(r"cuda(?::(\d+))?")


def pick_device(device: str = "auto") -> torch.device:
    """'auto' takes the first CUDA GPU when there is one, else the CPU; 'cuda' or 'cuda:N'
    without that GPU is an error naming what the machine has."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    match = _CUDA.fullmatch(device) if isinstance(device, str) else None
    if match is None:
        raise InputError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    if not torch.cuda.is_available():
        raise InputError(f"device {device!r} was asked for but no CUDA GPU is available")
    index, count = int(match.group(1) or 0), torch.cuda.device_count()
    if index >= count:
        raise InputError(
            f"device {device!r} does not exist: this machine has {count} CUDA GPU"
            f"{'s' * (count != 1)} (cuda:0 to cuda:{count - 1})"
        )
    return torch.device("cuda", index)


def device_name(device: torch.device) -> str:
    """Where a model runs, for people: 'CPU' or 'cuda:0 (NVIDIA A100-SXM4-40GB)'."""
    if device.type != "cuda":
        return device.type.upper()
    index = torch.cuda.current_device() if device.index is None else device.index
    return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
