"""Switching a caller's Hugging Face model to eager attention for one call, and back.

Eager attention is the only implementation that returns its weights (sdpa and flash attention
fuse them away), and eval mode turns dropout off so that the weights recorded are the ones that
computed the output. A model someone else holds must come back as it was: every config's
attention implementation and every module's training flag are put back when the call ends,
also when it fails.

One switch per model (kept in a weak table, so it goes when the model goes) serialises the calls
of every lens over that model: two threads never switch the same model at once, and a call
nested in another (a trace that first decodes) switches only once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from torch import nn
from transformers import PretrainedConfig, PreTrainedModel

from attnlens.record.errors import InputError

EAGER = "eager"
FIELD = "_attn_implementation_internal"  # where a config keeps it (its setter recurses)
MISSING = object()


def configs_of(model: PreTrainedModel) -> list[PretrainedConfig]:
    """Every config object the model reads its attention implementation from: its own, its
    submodels' and their sub-configs (T5's encoder and decoder have their own), once each."""
    found: dict[int, PretrainedConfig] = {}
    pending = [m.config for m in model.modules() if isinstance(m, PreTrainedModel)]
    while pending:
        config = pending.pop()
        if id(config) in found:
            continue
        found[id(config)] = config
        subs = (getattr(config, key, None) for key in getattr(config, "sub_configs", {}))
        pending += [sub for sub in subs if isinstance(sub, PretrainedConfig)]
    return list(found.values())


@dataclass(frozen=True)
class Saved:
    """What a model had before a call: attention implementation per config, training per module."""

    implementations: tuple[tuple[PretrainedConfig, object], ...]
    training: tuple[tuple[nn.Module, bool], ...]

    @classmethod
    def of(cls, model: PreTrainedModel) -> Saved:
        implementations = tuple((c, c.__dict__.get(FIELD, MISSING)) for c in configs_of(model))
        return cls(implementations, tuple((m, m.training) for m in model.modules()))

    def restore(self) -> None:
        """Put every value back as it was (the internal field: no checks, no recursion)."""
        for config, implementation in self.implementations:
            if implementation is MISSING:
                config.__dict__.pop(FIELD, None)
            else:
                config.__dict__[FIELD] = implementation
        for module, training in self.training:
            module.training = training


def not_eager(model: PreTrainedModel) -> list[str]:
    """Names of the (sub)models whose attention is not eager."""
    return [
        type(m).__name__
        for m in model.modules()
        if isinstance(m, PreTrainedModel) and m.config._attn_implementation != EAGER
    ]


def switch_to_eager(model: PreTrainedModel) -> Saved:
    """Eager attention and eval mode; what the model had, to restore. A model whose attention
    cannot be switched (transformers allows it only for attention written against its
    AttentionInterface) is put back and refused."""
    saved = Saved.of(model)
    try:
        model.set_attn_implementation(EAGER)
    except (ValueError, ImportError, AttributeError) as error:
        saved.restore()
        raise _cannot_switch(model, str(error).splitlines()[0]) from None
    stuck = not_eager(model)
    if stuck:
        saved.restore()
        raise _cannot_switch(model, f"{', '.join(dict.fromkeys(stuck))} kept its implementation")
    model.eval()
    return saved


def _cannot_switch(model: PreTrainedModel, reason: str) -> InputError:
    name = type(model).__name__
    return InputError(
        f"{name} cannot be switched to eager attention, the only implementation that returns "
        f"attention weights ({reason}); load it with attn_implementation='eager' and wrap it again"
    )


class Switch:
    """The lock and nesting depth of one model's switch to eager attention."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.depth = 0
        self.saved: Saved | None = None

    @contextmanager
    def held(self, model: PreTrainedModel) -> Iterator[None]:
        """The model in eager attention and eval mode for the block, as it was after."""
        with self.lock:
            if self.depth == 0:
                self.saved = switch_to_eager(model)
            self.depth += 1
            try:
                yield
            finally:
                self.depth -= 1
                if self.depth == 0 and self.saved is not None:
                    self.saved.restore()
                    self.saved = None


_switches: weakref.WeakKeyDictionary[nn.Module, Switch] = weakref.WeakKeyDictionary()
_switches_lock = threading.Lock()


def switch_of(model: PreTrainedModel) -> Switch:
    """The one Switch of this model, shared by every lens over it."""
    with _switches_lock:
        switch = _switches.get(model)
        if switch is None:
            switch = _switches[model] = Switch()
        return switch
