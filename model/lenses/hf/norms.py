"""The norms of what each head of a Hugging Face model carries and writes (record/norms.py), from
the values its attention received and its heads' outputs (hf/heads.py), through each head's own
slice of W^O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import torch
from transformers import PreTrainedModel

from attnlens.model.lenses.hf.capture import UnexpressibleError
from attnlens.model.lenses.hf.heads import HeadsError, forward_heads, output_weights
from attnlens.model.net.contributions import KeptFactors, layer_norms
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Kind, ModelInfo


class Read(Protocol):
    """One layer's heads as their attention call received and returned them."""

    @property
    def values(self) -> torch.Tensor: ...  # (H_kv, K, d_head)
    @property
    def output(self) -> torch.Tensor: ...  # (H, Q, d_head)


Taken = tuple[torch.Tensor, torch.Tensor]  # a layer's norms: (H, K) carried, (H, Q) written


def norms_of(
    model: PreTrainedModel,
    model_type: str,
    info: ModelInfo,
    heads: Mapping[Kind, Sequence[Read | Taken]],
    kept: KeptFactors | None = None,
) -> dict[Kind, HeadNorms]:
    """Every kind's HeadNorms of what one forward pass's heads read and wrote (a layer whose
    norms its call took already: those); kept: the model's factors taken by earlier passes (its
    lens's), else taken here."""
    held = any(not isinstance(p, tuple) for layers in heads.values() for p in layers)
    projected = output_weights(model, model_type, info) if held else None
    kept = KeptFactors() if kept is None else kept
    out: dict[Kind, HeadNorms] = {}
    for kind, layers in heads.items():
        pairs: list[Taken] = []
        for i, p in enumerate(layers):
            if isinstance(p, tuple):
                pairs.append(p)
                continue
            assert projected is not None, "a layer held its heads"
            w_o = projected.weight(kind, i)
            factors = kept.of((kind, i), w_o, p.output.size(0))
            pairs.append(layer_norms(w_o, p.values, p.output, factors))
        out[kind] = HeadNorms(
            carried=torch.stack([c for c, _ in pairs]).float().cpu().numpy(),  # (L, H, K)
            written=torch.stack([w for _, w in pairs]).float().cpu().numpy(),  # (L, H, Q)
        )
    return out


def head_norms(
    model: PreTrainedModel,
    model_type: str,
    info: ModelInfo,
    inputs: Mapping[str, Any],
    kept: KeptFactors | None = None,
) -> dict[Kind, HeadNorms]:
    """Every kind's HeadNorms for one input (a batch of one), by a private copy's forward pass."""
    run = forward_heads(model, model_type, info, inputs, exact_weights=False)
    return norms_of(model, model_type, info, run.heads, kept)


class InCall:
    """Takes each layer's norms inside its attention call (hf/capture.py's TAKE_NORMS), while
    the values and heads' outputs are at hand, so that the pass holds none of them: a layer is
    told by its attention module, the one module whose part of the model holds that layer's
    W^O and no other's. A module it cannot tell (an architecture whose layers share one W^O)
    is left to the trace, which takes that layer's norms after the pass."""

    def __init__(self, model: PreTrainedModel, info: ModelInfo, kept: KeptFactors) -> None:
        """model: the pass's own (a private copy: its modules are told apart by identity)."""
        self.projected = output_weights(model, model.config.model_type, info)
        self.kept = kept
        self.layers = _layer_modules(model, self.projected.modules)

    def __call__(
        self, module: torch.nn.Module, values: torch.Tensor, output: torch.Tensor
    ) -> Taken | None:
        key = self.layers.get(id(module))
        if key is None:
            return None
        w_o = self.projected.weight(*key)
        try:
            return layer_norms(w_o, values, output, self.kept.of(key, w_o, output.size(0)))
        except ValueError:  # held instead: the trace's own step says why, and keeps the pass
            return None


def _layer_modules(
    model: torch.nn.Module, projections: Mapping[tuple[Kind, int], torch.nn.Module]
) -> dict[int, tuple[Kind, int]]:
    """id(module) → its layer, for every module under the highest part of the model that holds
    one layer's W^O and no other's (the attention module calling the kernel is one of them:
    GPT-2's attn holds its c_proj, BERT's layer holds both its self-attention and its output
    dense); a W^O shared by several layers tells none (each of its parts holds them all)."""
    paths = {id(m): name for name, m in model.named_modules(remove_duplicate=False)}
    owner: dict[str, tuple[Kind, int] | None] = {}  # each ancestor of a W^O: its one layer
    for key, proj in projections.items():
        parts = paths[id(proj)].split(".")
        for depth in range(1, len(parts)):
            prefix = ".".join(parts[:depth])
            owner[prefix] = key if owner.get(prefix, key) == key else None
    tops: dict[tuple[Kind, int], str] = {}  # each layer's highest part holding its W^O alone
    for prefix, alone in sorted(owner.items(), key=lambda kv: kv[0].count(".")):
        if alone is not None and alone not in tops:
            tops[alone] = prefix
    out: dict[int, tuple[Kind, int]] = {}
    for key, top in tops.items():
        for m in model.get_submodule(top).modules():
            out[id(m)] = key
    return out


def trace_norms(
    model: PreTrainedModel,
    info: ModelInfo,
    captured: Mapping[Kind, Sequence[Read | Taken]] | None,
    inputs: Mapping[str, Any],
    kept: KeptFactors | None = None,
) -> tuple[dict[Kind, HeadNorms] | None, str | None]:
    """A trace's norms and, where they cannot be taken, why: from the values its own capture
    received (a record of scores), else by a private copy's pass over the same inputs; kept:
    the model's factors (its lens's)."""
    model_type = model.config.model_type
    try:
        if captured is not None:
            return norms_of(model, model_type, info, captured, kept), None
        return head_norms(model, model_type, info, inputs, kept), None
    except (HeadsError, UnexpressibleError, ValueError) as why:
        return None, f"attnlens cannot take this model's values: {why}"
