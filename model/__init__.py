"""attnlens' model side: the paper's Transformer, what it records, and how models are loaded."""

from model.config import TransformerConfig
from model.decoding.record import DecodeRun
from model.errors import InputError, ModelNotFoundError
from model.lens import Lens
from model.registry import ModelEntry, bundled_models, load
from model.trace import ModelInfo, Trace

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
