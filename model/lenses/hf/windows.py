"""Which keys each layer lets a query see, as the model's config sets it: GPT-Neo's local
layers, sliding windows (Mistral, and Qwen2 / Gemma 2 on some layers), Llama 4's chunks,
ModernBERT's local encoder layers. The record's masks are built from these rules, one per layer
where the layers differ; a layer type attnlens does not know is named in the record's warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from transformers import PretrainedConfig

FULL_TYPES = ("full_attention", "global", "attention")
SLIDING_TYPES = ("sliding_attention", "local")


@dataclass(frozen=True)
class LayerRule:
    """One layer's restriction beyond causality (decoders) or none (encoders)."""

    window: int | None = None  # decoder: keys j with i - j < window; encoder: |i - j| ≤ window
    chunk: int | None = None  # keys j in the same chunk of `chunk` positions as i
    unknown: str | None = None  # a layer type attnlens cannot turn into a mask

    def allowed(self, queries: int, keys: int, causal: bool) -> np.ndarray:
        """(Q, K) bool: where this layer lets query i see key j (before padding)."""
        i, j = np.indices((queries, keys))
        allowed = j <= i if causal else np.ones((queries, keys), dtype=np.bool_)
        if self.window is not None:
            allowed &= (i - j < self.window) if causal else (np.abs(i - j) <= self.window)
        if self.chunk is not None:
            allowed &= i // self.chunk == j // self.chunk
        return allowed


@dataclass(frozen=True)
class StackRules:
    """One rule per layer of a stack; empty when every layer sees everything allowed."""

    layers: tuple[LayerRule, ...] = ()

    def masks(self, queries: int, keys: int, causal: bool, n_layers: int) -> list[np.ndarray]:
        """(Q, K) masks, one per layer (the same for every layer without rules)."""
        rules = self.layers or (LayerRule(),) * n_layers
        return [rule.allowed(queries, keys, causal) for rule in rules]

    def unknown(self) -> list[str]:
        """What the record must say it cannot show: each unknown layer type and its layers."""
        found: dict[str, list[int]] = {}
        for layer, rule in enumerate(self.layers):
            if rule.unknown is not None:
                found.setdefault(rule.unknown, []).append(layer)
        return [
            f"layers {', '.join(map(str, layers))} use {name!r} attention, whose mask attnlens "
            "cannot derive: their mask shows only causality and padding"
            for name, layers in found.items()
        ]


def _rule(layer_type: str, text: PretrainedConfig) -> LayerRule:
    if layer_type in FULL_TYPES:
        return LayerRule()
    if layer_type in SLIDING_TYPES:
        window = getattr(text, "window_size", None) if layer_type == "local" else None
        window = window if window is not None else getattr(text, "sliding_window", None)
        if isinstance(window, int) and window > 0:
            return LayerRule(window=window)
        return LayerRule(unknown=layer_type)
    if layer_type == "chunked_attention":
        chunk = getattr(text, "attention_chunk_size", None)
        return LayerRule(chunk=chunk) if isinstance(chunk, int) and chunk > 0 else LayerRule()
    return LayerRule(unknown=layer_type)


def stack_rules(config: PretrainedConfig, n_layers: int) -> StackRules:
    """The per-layer rules of a model's (text) stack."""
    text = config.get_text_config()
    kinds = getattr(text, "attention_layers", None)  # GPT-Neo: "global" / "local" per layer
    if not isinstance(kinds, list | tuple):
        kinds = getattr(text, "layer_types", None)
    if isinstance(kinds, list | tuple) and len(kinds) == n_layers:
        rules = tuple(_rule(str(k), text) for k in kinds)
        return StackRules(() if all(r == LayerRule() for r in rules) else rules)
    window = getattr(text, "sliding_window", None)
    if isinstance(window, int) and window > 0 and getattr(text, "use_sliding_window", True):
        return StackRules((LayerRule(window=window),) * n_layers)  # Mistral: every layer
    return StackRules()


def unexplained_zeros(
    weights: np.ndarray, masks: list[np.ndarray] | np.ndarray
) -> list[tuple[int, int]]:
    """(layer, count) for each layer where entries its mask allows got exactly 0 weight in
    every head: a mask attnlens did not derive (a softmax never gives exactly 0 otherwise,
    short of a score more than ~100 below the row's largest)."""
    found = []
    for layer, mask in enumerate(masks):
        zero = (weights[layer] == 0).all(axis=0) & mask  # (Q, K)
        if zero.any():
            found.append((layer, int(zero.sum())))
    return found
