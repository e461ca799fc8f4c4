"""Our own models' tensors as the records keep them: numpy on the CPU, padding marked."""

from __future__ import annotations

import numpy as np
import torch


def past_length(values: np.ndarray, lengths: np.ndarray, axis: int, fill: float) -> np.ndarray:
    """values with every entry at or past each row's length along axis set to fill; the
    batch is axis 0."""
    positions = np.arange(values.shape[axis])
    shape = [1] * values.ndim
    shape[0], shape[axis] = len(lengths), values.shape[axis]
    beyond = (positions[None, :] >= lengths[:, None]).reshape(shape)
    return np.where(beyond, fill, values)


def numpy_of(t: torch.Tensor) -> np.ndarray:
    """A tensor as float32 numpy on the CPU, a copy."""
    return t.detach().float().cpu().numpy().copy()
