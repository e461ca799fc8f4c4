"""A private copy of a Hugging Face model whose attention runs an implementation of attnlens'
choosing: new modules and configs, every tensor shared, the model every session uses never
switched."""

from __future__ import annotations

import copy
import itertools

from transformers import PreTrainedModel

from attnlens.model.lenses.hf.capture import CAPTURE, UnexpressibleError
from attnlens.model.lenses.hf.eager import configs_of

NOT_REGISTERED = "its attention code does not go through transformers' attention functions"
__all__ = ["NOT_REGISTERED", "capture_twin", "kernel_twin"]


def capture_twin(model: PreTrainedModel) -> PreTrainedModel:
    """A private copy of model whose attention goes through CAPTURE (record/scores.py): new
    modules and configs, every tensor shared, so the model every session uses is never
    switched; UnexpressibleError where its attention does not go through transformers' registry."""
    return kernel_twin(model, CAPTURE)


def kernel_twin(model: PreTrainedModel, implementation: str) -> PreTrainedModel:
    """A private copy of model (new modules and configs, every tensor shared) whose attention
    runs `implementation` (CAPTURE, or "sdpa" where no weights are wanted: the shared model is
    eager, which builds every head's T × T); UnexpressibleError where the model cannot."""
    shared = itertools.chain(model.parameters(), model.buffers())
    twin = copy.deepcopy(model, {id(t): t for t in shared})  # new modules, same tensors
    try:
        twin.set_attn_implementation(implementation)
    except (ValueError, ImportError, AttributeError) as error:
        raise UnexpressibleError(f"{NOT_REGISTERED} ({str(error).splitlines()[0]})") from None
    if any(c._attn_implementation != implementation for c in configs_of(twin)):
        raise UnexpressibleError(NOT_REGISTERED)
    return twin
