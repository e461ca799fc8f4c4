"""Sinusoidal positional encoding (§3.5)."""

from __future__ import annotations

import math

import torch


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same)."""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    div = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model)
    )  # (ceil(d_model/2),)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)  # (P, d_model)
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div[: d_model // 2])
    return pe.float()


def rows(table: torch.Tensor, start: int, length: int) -> torch.Tensor:
    """Rows start..start+length-1 of a positional table, or a ValueError naming the limit."""
    if start + length > table.size(0):
        raise ValueError(
            f"position {start + length - 1} is beyond the model's limit of "
            f"{table.size(0)} positions"
        )
    return table[start : start + length]  # (length, d_model)
