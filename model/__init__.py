"""attnlens' model side: the paper's Transformer, what it records, and how models are loaded.

The records (`Trace`, `DecodeRun`) and errors load without torch, so `viz` can draw saved
records in a notebook that has no torch; the loaders import torch on first use.
"""

from typing import TYPE_CHECKING

from model.config import TransformerConfig
from model.decoding.record import DecodeRun
from model.errors import InputError, ModelNotFoundError
from model.lazy import lazy_attributes
from model.trace import ModelInfo, Trace

if TYPE_CHECKING:
    from model.lens import Lens
    from model.registry import ModelEntry, bundled_models, load

__getattr__ = lazy_attributes(
    __name__,
    {
        "Lens": "model.lens",
        "ModelEntry": "model.registry",
        "bundled_models": "model.registry",
        "load": "model.registry",
    },
)

__all__ = [
    "DecodeRun",
    "InputError",
    "Lens",
    "ModelEntry",
    "ModelInfo",
    "ModelNotFoundError",
    "Trace",
    "TransformerConfig",
    "bundled_models",
    "load",
]
