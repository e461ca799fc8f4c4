"""What each head of a Hugging Face model read and wrote, by value: the values its attention call
received (after W_V and its bias b_V; at the keys' width under grouped-query attention) and each
head's output o_{h,i} = Σⱼ αᵢⱼ v_{h,j}, with the weights (or the scores they come from); and each
layer's output projection W^O (model/net/contributions.py turns them into norms).

A model whose attention goes through transformers' attention registry runs, in a private copy,
HEADS: CAPTURE's kernel (hf/capture.py; the same output as sdpa, and the scores record), or where
CAPTURE cannot state the scores (ModernBERT's local mask), the model's own eager attention
function; either hands back LayerHeads in the slot where `output_attentions` carries weights. A
model whose attention code does not go through the registry (BLOOM, GPT-Neo, DeBERTa, …) gives
its eager weights, and its values are computed by the layer's own modules from the layer's input
(`EAGER_VALUES`, stated per architecture and checked in the tests against hooks); one not listed
has none, and HeadsError says why.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn
from transformers import AttentionInterface, PreTrainedModel
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

from attnlens.model.lenses.hf.ablation import output_projections, weight_of
from attnlens.model.lenses.hf.capture import UnexpressibleError, capture_attention
from attnlens.model.lenses.hf.twin import kernel_twin
from attnlens.model.lenses.summaries import exact
from attnlens.model.net.contributions import head_outputs
from attnlens.record.errors import InputError
from attnlens.record.scores import LayerScores
from attnlens.record.trace import Kind, ModelInfo

HEADS = "attnlens_heads"


class HeadsError(InputError):
    """The model's heads' values or output projections cannot be stated exactly."""


@dataclass(frozen=True)
class LayerHeads:
    """One layer of one kind of attention, as its heads computed it (batch of one): its weights
    as the eager kernel computed them, or (scores) what the kernel computed them from."""

    weights: torch.Tensor | None  # (H, Q, K)
    scores: LayerScores | None  # where weights is None: every head's weights exact on demand
    values: torch.Tensor  # (H_kv, K, d_head): query head h reads values[h // (H / H_kv)]
    output: torch.Tensor  # (H, Q, d_head): each head's output, before W^O

    def head(self, head: int) -> torch.Tensor:
        """(Q, K) float32: one head's weights."""
        if self.weights is not None:
            return self.weights[head].float()
        assert self.scores is not None, "LayerHeads holds weights or scores"
        return torch.from_numpy(self.scores.head(head))


def heads_attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, LayerHeads]:
    """The layer's output as CAPTURE computes it (the sdpa kernel's), or where CAPTURE cannot
    state its scores (a local mask), as the model's own eager attention function does; its
    values and heads' outputs handed back with the scores or weights."""
    try:
        out, scores = capture_attention(module, query, key, value, attention_mask, **kwargs)
        weights = None
    except UnexpressibleError:
        eager = getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)
        if eager is None or query.size(0) != 1:
            raise
        mask = None if attention_mask is None else _additive(attention_mask, query.dtype)
        out, all_weights = eager(module, query, key, value, mask, **kwargs)  # (1, Q, H, d)
        scores, weights = None, all_weights[0]
    return out, LayerHeads(weights, scores, value[0], out[0].transpose(0, 1))


def _additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A boolean mask (True: may attend) as the additive one eager attention adds."""
    if mask.dtype != torch.bool:
        return mask.to(dtype)
    blocked = torch.tensor(torch.finfo(dtype).min, dtype=dtype, device=mask.device)
    return torch.where(mask, torch.zeros((), dtype=dtype, device=mask.device), blocked)


AttentionInterface.register(HEADS, heads_attention)
ALL_MASK_ATTENTION_FUNCTIONS.register(HEADS, sdpa_mask)  # CAPTURE's masks


def _split(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(1, T, H·d) → (1, H, T, d)."""
    return x.view(x.size(0), x.size(1), heads, -1).transpose(1, 2)


def _deberta(a: Any, x: torch.Tensor) -> torch.Tensor:
    """DeBERTa (v1): in_proj's output holds each head's q, k, v side by side; then v_bias."""
    qkv = _split(a.in_proj(x), a.num_attention_heads)  # (1, H, T, 3d)
    out: torch.Tensor = qkv.chunk(3, dim=-1)[2] + _split(
        a.v_bias[None, None, :], a.num_attention_heads
    )
    return out


def _mpt(a: Any, x: torch.Tensor) -> torch.Tensor:
    mixed = a.Wqkv(x)
    if a.clip_qkv:
        mixed = mixed.clamp(min=-a.clip_qkv, max=a.clip_qkv)
    return _split(mixed.chunk(3, dim=2)[2], a.n_heads)


@dataclass(frozen=True)
class EagerValues:
    """Where an eager-only architecture's values come from: the attention module of a layer,
    the norm its input goes through first (the first that exists; none: the layer's input),
    and how the module's own projections give the values, (1, H_kv, T, d), from that input."""

    attention: str
    norms: tuple[str, ...]
    values: Callable[[Any, torch.Tensor], torch.Tensor]


EAGER_VALUES: dict[str, EagerValues] = {
    "bloom": EagerValues("h.{layer}.self_attention", ("h.{layer}.input_layernorm",),
                         lambda a, x: a._reshape(a.query_key_value(x))[2]),
    "gpt_neo": EagerValues("h.{layer}.attn.attention", ("h.{layer}.ln_1",),
                           lambda a, x: a._split_heads(a.v_proj(x), a.num_heads, a.head_dim)),
    "mpt": EagerValues("blocks.{layer}.attn", ("blocks.{layer}.norm_1",), _mpt),
    "falcon": EagerValues("h.{layer}.self_attention",
                          ("h.{layer}.ln_attn", "h.{layer}.input_layernorm"),
                          lambda a, x: a._split_heads(a.query_key_value(x))[2].transpose(1, 2)),
    "xglm": EagerValues("layers.{layer}.self_attn", ("layers.{layer}.self_attn_layer_norm",),
                        lambda a, x: _split(a.v_proj(x), a.num_heads)),
    "deberta": EagerValues("encoder.layer.{layer}.attention.self", (), _deberta),
    "deberta-v2": EagerValues("encoder.layer.{layer}.attention.self", (),
                              lambda a, x: _split(a.value_proj(x), a.num_attention_heads)),
    "roformer": EagerValues("encoder.layer.{layer}.attention.self", (),
                            lambda a, x: _split(a.value(x), a.num_attention_heads)),
    "mpnet": EagerValues("encoder.layer.{layer}.attention.attn", (),
                         lambda a, x: _split(a.v(x), a.num_attention_heads)),
}  # fmt: skip
UNSTATED = {  # config flags under which an eager architecture's values are not EAGER_VALUES'
    "roformer": ("rotary_value", "it rotates its values by position"),
    "deberta": ("talking_head", "it mixes its heads' weights (talking heads)"),
}


def find(modules: Mapping[str, nn.Module], ending: str) -> str | None:
    """The one module path ending in `ending` (the head class puts a prefix before it)."""
    paths = [p for p in modules if p == ending or p.endswith("." + ending)]
    return paths[0] if len(paths) == 1 else None


@dataclass(frozen=True)
class OutputWeights:
    """Every layer's W^O per kind, as (d_model, H·d_head) with its bias (None: none), and the
    module that applies it."""

    found: Mapping[tuple[Kind, int], tuple[torch.Tensor, torch.Tensor | None]]
    modules: Mapping[tuple[Kind, int], nn.Module]

    def weight(self, kind: Kind, layer: int) -> torch.Tensor:
        return self.found[kind, layer][0]

    def bias(self, kind: Kind, layer: int) -> torch.Tensor | None:
        return self.found[kind, layer][1]


def output_weights(model: PreTrainedModel, model_type: str, info: ModelInfo) -> OutputWeights:
    """Each layer's W^O, found where the architecture keeps it (hf/ablation.py's table; ALBERT's
    shared layers by their group); HeadsError naming why where it cannot be found."""
    if model_type == "albert":
        return _albert(model, info)
    located = output_projections(model, model_type, info)
    shared = located.reason is not None and "share one weight" in located.reason
    if located.reason is not None and not shared:
        raise HeadsError(f"{info.name}: {located.reason}")
    found, modules = {}, {}
    for key, proj in located.found.items():
        modules[key] = module = model.get_submodule(proj.path)
        weight = weight_of(module).detach()
        found[key] = (weight.T if proj.rows else weight, _bias(module))
    return OutputWeights(found, modules)


def _albert(model: PreTrainedModel, info: ModelInfo) -> OutputWeights:
    """ALBERT: layer l runs layer group l // (L / groups), each group one shared layer."""
    config = model.config
    if getattr(config, "inner_group_num", 1) != 1:
        raise HeadsError(f"{info.name}: ALBERT with {config.inner_group_num} layers a group")
    modules = dict(model.named_modules())
    found: dict[tuple[Kind, int], tuple[torch.Tensor, torch.Tensor | None]] = {}
    used: dict[tuple[Kind, int], nn.Module] = {}
    for layer in range(info.n_layers):
        group = int(layer / (info.n_layers / config.num_hidden_groups))
        path = find(modules, f"albert_layer_groups.{group}.albert_layers.0.attention.dense")
        if path is None:
            raise HeadsError(f"{info.name}: no attention output projection for layer {layer}")
        used["encoder_self", layer] = module = modules[path]
        found["encoder_self", layer] = (weight_of(module).detach(), _bias(module))
    return OutputWeights(found, used)


@dataclass(frozen=True)
class Forward:
    """One forward pass of a private copy: every layer's LayerHeads per kind, the hidden states
    per stack (`encoder`, `decoder`: each layer's input, then the last layer's output as the
    copy computed it) and the logits."""

    heads: dict[Kind, list[LayerHeads]]
    hidden: dict[str, tuple[torch.Tensor, ...]]
    logits: torch.Tensor | None


STACKS = {"encoder": "encoder_self", "decoder": "decoder_self"}
OUTPUTS: dict[str, dict[Kind, str]] = {  # architecture → kind → the output's field
    "encoder": {"encoder_self": "attentions"},
    "decoder": {"decoder_self": "attentions"},
    "encoder-decoder": {"encoder_self": "encoder_attentions",
                        "decoder_self": "decoder_attentions", "cross": "cross_attentions"},
}  # fmt: skip


def private_copy(model: PreTrainedModel) -> tuple[PreTrainedModel, bool]:
    """A copy of model (new modules, every tensor shared) running HEADS, and True; where its
    attention does not go through transformers' registry, an eager copy, and False."""
    try:
        return kernel_twin(model, HEADS), True
    except UnexpressibleError:
        return kernel_twin(model, "eager"), False


@torch.inference_mode()
def forward_heads(
    model: PreTrainedModel,
    model_type: str,
    info: ModelInfo,
    inputs: Mapping[str, Any],
    without: str | None = None,
    exact_weights: bool = True,
) -> Forward:
    """Run a private copy of model on inputs (a batch of one): what its heads read and wrote.
    `without`: the path of a module (a final norm) the copy replaces by the identity, so that
    the last hidden state is the residual stream before it. exact_weights: the scores' rows'
    log-sum-exp made exact, as a trace keeps them (False: where no weight is read)."""
    twin, registered = private_copy(model)
    if without is not None:
        holder, _, name = without.rpartition(".")
        setattr(twin.get_submodule(holder) if holder else twin, name, nn.Identity())
    out = twin(**inputs, output_attentions=True, output_hidden_states=True)
    hidden = _hidden(out, info)
    heads: dict[Kind, list[LayerHeads]] = {}
    for kind, field in OUTPUTS[info.architecture].items():
        got = list(getattr(out, field))
        if registered and all(isinstance(p, LayerHeads) for p in got):
            heads[kind] = [_exact(p) for p in got] if exact_weights else got
        else:
            stack = "decoder" if kind == "decoder_self" else "encoder"
            heads[kind] = _eager_heads(twin, model_type, info, got, hidden[stack])
    return Forward(heads, hidden, getattr(out, "logits", None))


def _exact(heads: LayerHeads) -> LayerHeads:
    """The weights a trace keeps, to the bit: the scores' log-sum-exp exact to float64."""
    return heads if heads.scores is None else replace(heads, scores=exact(heads.scores))


def _hidden(out: Any, info: ModelInfo) -> dict[str, tuple[torch.Tensor, ...]]:
    if info.architecture == "encoder-decoder":
        return {"encoder": out.encoder_hidden_states, "decoder": out.decoder_hidden_states}
    stack = "decoder" if info.architecture == "decoder" else "encoder"
    return {stack: out.hidden_states}


def _eager_heads(
    twin: PreTrainedModel,
    model_type: str,
    info: ModelInfo,
    weights: list[torch.Tensor],
    hidden: tuple[torch.Tensor, ...],
) -> list[LayerHeads]:
    """LayerHeads of an eager-only architecture: its weights, and its values from each layer's
    input through the layer's own norm and projections (EAGER_VALUES)."""
    stated = EAGER_VALUES.get(model_type)
    if stated is None:
        raise HeadsError(
            f"{info.name}: the attention of {model_type} models does not go through "
            "transformers' attention functions, and attnlens does not know where its values "
            f"are computed (known: {', '.join(sorted(EAGER_VALUES))})"
        )
    flag, why = UNSTATED.get(model_type, ("", ""))
    if flag and getattr(twin.config, flag, False):
        raise HeadsError(f"{info.name}: attnlens cannot state its values: {why}")
    modules = dict(twin.named_modules())
    layers = []
    for layer, alpha in enumerate(weights):
        x = hidden[layer]  # (1, T, d_model): the layer's input
        for norm in stated.norms:
            path = find(modules, norm.format(layer=layer))
            if path is not None:
                x = modules[path](x)
                break
        path = find(modules, stated.attention.format(layer=layer))
        if path is None:
            raise HeadsError(f"{info.name}: no attention module at …{stated.attention}")
        values = stated.values(modules[path], x)[0]  # (H_kv, T, d)
        layers.append(LayerHeads(alpha[0], None, values, head_outputs(alpha[0], values)))
    return layers


def _bias(module: nn.Module) -> torch.Tensor | None:
    bias = getattr(module, "bias", None)
    return bias.detach() if isinstance(bias, torch.Tensor) else None
