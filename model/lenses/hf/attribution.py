"""Direct logit attribution on Hugging Face decoders: each head's output, each attention's output
bias, each layer's MLP and the embeddings, carried through every norm after them (their means and
scales frozen from the forward pass) and the unembedding, as TransformerLens defines it for
pre-norm models (record/attribution.py).

Pre-norm blocks (GPT-2, Llama, …, the decoders of mBART, Pegasus, M2M100, T5) add each sublayer's
output to the residual stream as it is, so the stream before the final norm is the embeddings
plus, per layer, Σ_h W_O^h o_{h,i} + b_O and the MLP's output. The heads' outputs come from the
kernel by value (hf/heads.py); each layer's MLP part is what its block added besides its
attention, read off the hidden states of a private copy whose final norm is the identity (so its
last hidden state is the stream before that norm). Gemma 2 puts a norm after each attention too
(sandwich norms), through which its heads are carried, frozen, and soft-caps its logits. Post-norm
decoders (BART, Marian, Blenderbot-small) are walked layer by layer at the one position: each
sublayer added, then carried through the LayerNorm after it, the MLP computed by the layer's own
modules, and each layer's output checked against the model's next hidden state.

Which architectures are built which way is stated (LAYOUTS), never guessed; at run time each
attention part must equal the output projection's own output, and each frozen norm the norm's
own output, or the attribution refuses, saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from transformers import PreTrainedModel

from attnlens.model.budget import check_budget
from attnlens.model.lenses.hf.ablation import weight_of
from attnlens.model.lenses.hf.frozen import attention_parts, freeze
from attnlens.model.lenses.hf.heads import (
    EAGER_VALUES,
    Forward,
    OutputWeights,
    find,
    forward_heads,
    output_weights,
)
from attnlens.model.net.stream import Shape, Stream, attribution
from attnlens.record.attribution import LogitAttribution
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind, ModelInfo

Condition = tuple[str, Callable[[Any], bool]]  # why not, and when a config breaks the layout


@dataclass(frozen=True)
class PostNorm:
    """A post-norm decoder layer (BART's): where it is (a path ending with {layer}), the norm
    after each of its sublayers (its attentions', in the record's order, then its MLP's), and
    how its MLP maps one position's input to its output."""

    layer: str
    norms: tuple[str, ...]
    mlp: Callable[[Any, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Layout:
    """A decoder's layout: a pre-norm one's final norm (a path ending) or a post-norm one's
    layers (post_norm), what comes after them (a projection to the embedding width; a scale on
    the stream before the unembedding; a soft cap on the logits, the config's name for it), the
    norm each attention's output goes through before it is added (sandwich norms: a path
    ending with {layer}), and the config settings under which the model is built otherwise."""

    final_norm: str | None
    project: str | None = None
    scale: Callable[[Any], float] = lambda config: 1.0
    breaks: tuple[Condition, ...] = field(default=())
    after_attention: str | None = None
    softcap: str | None = None
    post_norm: PostNorm | None = None


def _t5_scale(config: Any) -> float:
    return float(config.d_model**-0.5) if config.tie_word_embeddings else 1.0


_ROTARY = Layout("model.norm")
LAYOUTS: dict[str, Layout] = {
    **dict.fromkeys(("gpt2", "gpt_bigcode", "gpt_neo", "gptj", "codegen", "falcon"),
                    Layout("transformer.ln_f")),
    "bloom": Layout("transformer.ln_f", breaks=((
        "it adds its attention to the normed stream (apply_residual_connection_post_layernorm)",
        lambda c: bool(c.apply_residual_connection_post_layernorm)),)),
    "mpt": Layout("transformer.norm_f"),
    "ctrl": Layout("transformer.layernorm"),
    "gpt_neox": Layout("gpt_neox.final_layer_norm"),
    "opt": Layout("decoder.final_layer_norm", project="decoder.project_out", breaks=(
        ("it normalises after each sublayer (do_layer_norm_before false)",
         lambda c: not c.do_layer_norm_before),
        ("it has no final norm", lambda c: bool(getattr(c, "_remove_final_layer_norm", False))),
    )),
    "biogpt": Layout("biogpt.layer_norm"),
    "xglm": Layout("model.layer_norm"),
    **dict.fromkeys(("llama", "mistral", "qwen2", "qwen3", "gemma", "starcoder2"), _ROTARY),
    "phi": Layout("model.final_layernorm"),
    "gemma2": Layout("model.norm", after_attention="layers.{layer}.post_attention_layernorm",
                     softcap="final_logit_softcapping"),
    **dict.fromkeys(("mbart", "pegasus", "m2m_100"), Layout("decoder.layer_norm")),
    "t5": Layout("decoder.final_layer_norm", scale=_t5_scale),
}  # fmt: skip
_BART = Layout(None, post_norm=PostNorm(
    "decoder.layers.{layer}", ("self_attn_layer_norm", "encoder_attn_layer_norm",
                               "final_layer_norm"),
    lambda layer, x: layer.fc2(layer.activation_fn(layer.fc1(x)))))  # fmt: skip
LAYOUTS |= dict.fromkeys(("bart", "marian", "blenderbot-small"), _BART)
LOGIT_EXTRAS = ("final_logit_softcapping", "logit_scale", "logits_scaling")


def layout_of(model: PreTrainedModel, model_type: str, name: str) -> Layout:
    """The layout attnlens states for this model, or an InputError saying why there is none."""
    why = why_no_layout(model, model_type, name)
    if why:
        raise InputError(why)
    return LAYOUTS[model_type]


def why_no_layout(model: PreTrainedModel, model_type: str, name: str) -> str:
    """Why attnlens cannot attribute this model's logits ("" where its layout is stated)."""
    layout = LAYOUTS.get(model_type)
    if layout is None:
        return (
            f"no direct logit attribution for {name}: attnlens does not know how the blocks of "
            f"{model_type} models add to the residual stream (known: {', '.join(sorted(LAYOUTS))})"
        )
    text = model.config.get_text_config()
    for why, broken in layout.breaks:
        if broken(text):
            return f"no direct logit attribution for {name}: {why}"
    for extra in LOGIT_EXTRAS:
        if extra != layout.softcap and getattr(text, extra, None) not in (None, 1, 1.0):
            return f"no direct logit attribution for {name}: its logits pass {extra}"
    return ""


@torch.inference_mode()
def hf_attribution(
    model: PreTrainedModel,
    model_type: str,
    info: ModelInfo,
    ids: Sequence[int],
    at: int,
    token: int,
    described: Mapping[str, object],
    source: Sequence[int] | None = None,
) -> LogitAttribution:
    """The logit of `token` at decoder position `at` of ids (an encoder-decoder reading
    `source`) split into its direct parts; InputError where the model is not built as stated."""
    layout = layout_of(model, model_type, info.name)
    modules = dict(model.named_modules())
    norm_path = None if layout.final_norm is None else find(modules, layout.final_norm)
    if layout.final_norm is not None and norm_path is None:
        raise InputError(f"no direct logit attribution for {info.name}: no …{layout.final_norm}")
    check_budget(working_bytes(info, len(ids), len(source or ()), model_type in EAGER_VALUES),
                 "direct logit attribution", "attribute at an earlier position")  # fmt: skip
    device = next(model.parameters()).device
    run = forward_heads(model, model_type, info, _inputs(info, ids, source, device), norm_path)
    walk = Walk(layout, modules, output_weights(model, model_type, info), run, at)
    hidden = run.hidden["decoder"]  # each layer's input, then the stream before the final norm
    stream = Stream(("embeddings",), hidden[0][0, at])
    for layer in range(len(hidden) - 1):
        (walk.post_norm if layout.post_norm else walk.pre_norm)(stream, layer)
    y, frozen = hidden[-1][0, at], FROZEN_POST
    if norm_path is not None:
        norm = model.get_submodule(norm_path)
        y = norm(y.unsqueeze(0))[0]  # (d_model,): the model's own final norm
        frozen = freeze(stream, norm, y, "final")
    if layout.after_attention is not None:
        frozen += "; each attention's output through its own norm, frozen (sandwich norms)"
    unembed, logits = _unembed(model, layout, stream, y)
    kinds = walk.kinds
    kept = {"frozen": frozen, "position": at, **described} | _capped(model, layout, logits, token)
    shape = Shape({k: info.shape(k) for k in kinds}, len(hidden) - 1)
    bias = float(_logit_bias(model, unembed)[token])
    capped = _cap(model, layout, logits)
    logprob = float(capped[token] - torch.logsumexp(capped, 0))
    return attribution(stream, weight_of(unembed)[token], bias, (float(capped[token]), logprob),
                       shape, kept)  # fmt: skip


def working_bytes(info: ModelInfo, T: int, S: int, eager: bool) -> int:
    """What the forward pass holds besides the model: every layer's hidden states of the
    decoder (and encoder), and an eager-only model's weights of every head (T² each)."""
    L, H = info.shape("decoder_self")
    hidden = (L + 1) * (T + S) * info.d_model * (2 if S else 1)
    return 4 * (hidden + (L * H * T * T if eager else 0))


FROZEN_POST = "every sublayer's LayerNorm (post-norm), each with its mean and scale frozen"


@dataclass(frozen=True)
class Walk:
    """One forward pass's layers walked at one position, adding each layer's parts to a stream."""

    layout: Layout
    modules: Mapping[str, nn.Module]
    projected: OutputWeights
    run: Forward
    at: int

    @property
    def kinds(self) -> list[Kind]:
        return [k for k in ("decoder_self", "cross") if k in self.run.heads]

    def pre_norm(self, stream: Stream, layer: int) -> None:
        """A pre-norm layer: its attentions' parts (through a sandwich norm where there is
        one), then its MLP's, what the block added besides its attentions."""
        post = _module(self.modules, self.layout.after_attention, layer)
        written = sum(self._attention(stream, kind, layer, post).double() for kind in self.kinds)
        hidden, at = self.run.hidden["decoder"], self.at
        mlp = hidden[layer + 1][0, at].double() - hidden[layer][0, at].double() - written
        stream.add([("mlp", layer)], mlp)

    def post_norm(self, stream: Stream, layer: int) -> None:
        """A post-norm layer: each sublayer added to the stream, then carried through the norm
        after it, frozen; its MLP by the layer's own modules, and the layer's output checked
        against the model's own (its next hidden state)."""
        stated = self.layout.post_norm
        assert stated is not None, "a post-norm layout states its layers"
        block = _module(self.modules, stated.layer, layer)
        assert block is not None, "a stated layer path finds its layer"
        hidden, at = self.run.hidden["decoder"], self.at
        x = hidden[layer][0, at]  # (d_model,)
        for kind, norm_name in zip(self.kinds, stated.norms, strict=False):
            norm = block.get_submodule(norm_name)
            x = norm((x + self._attention(stream, kind, layer, None)).unsqueeze(0))[0]
            freeze(stream, norm, x, f"{kind} layer {layer}'s")
        out = stated.mlp(block, x.unsqueeze(0))[0]
        stream.add([("mlp", layer)], out)
        norm = block.get_submodule(stated.norms[-1])
        freeze(stream, norm, norm((x + out).unsqueeze(0))[0], f"layer {layer}'s last")
        stream.check(hidden[layer + 1][0, at], f"layer {layer}'s output")

    def _attention(self, stream: Stream, kind: Kind, layer: int, post: nn.Module | None) -> Any:
        heads = self.run.heads[kind][layer]
        return attention_parts(stream, self.projected, (kind, layer), heads, self.at, post)


def _module(modules: Mapping[str, nn.Module], ending: str | None, layer: int) -> nn.Module | None:
    """The one module at a path ending (with {layer} filled in); None for no ending."""
    if ending is None:
        return None
    path = find(modules, ending.format(layer=layer))
    if path is None:
        raise InputError(f"no direct logit attribution: no module at …{ending.format(layer=layer)}")
    return modules[path]


def _unembed(
    model: PreTrainedModel, layout: Layout, stream: Stream, y: torch.Tensor
) -> tuple[nn.Module, torch.Tensor]:
    """The unembedding and the model's own logits (V,) float64 before any cap, the stream
    carried to the unembedding's input."""
    y = _after(model, layout, stream, y)
    unembed = model.get_output_embeddings()
    extra = _final_logits_bias(model, weight_of(unembed).size(0), y.device)  # (V,)
    return unembed, unembed(y).double() + extra


def _cap(model: PreTrainedModel, layout: Layout, logits: torch.Tensor) -> torch.Tensor:
    """The logits after the model's soft cap c · tanh(z / c), if it caps them."""
    c = _softcap(model, layout)
    return logits if c is None else c * torch.tanh(logits / c)


def _softcap(model: PreTrainedModel, layout: Layout) -> float | None:
    if layout.softcap is None:
        return None
    value = getattr(model.config.get_text_config(), layout.softcap, None)
    return None if value is None else float(value)


def _capped(
    model: PreTrainedModel, layout: Layout, logits: torch.Tensor, token: int
) -> dict[str, object]:
    """The record's soft cap and the logit before it, where the model caps its logits."""
    c = _softcap(model, layout)
    return {} if c is None else {"softcap": c, "uncapped": float(logits[token])}


def _inputs(
    info: ModelInfo, ids: Sequence[int], source: Sequence[int] | None, device: torch.device
) -> dict[str, Any]:
    """The forward pass's inputs: the decoder's ids (and an encoder-decoder's source)."""
    tokens = torch.tensor([list(ids)], device=device)  # (1, T)
    if info.architecture != "encoder-decoder":
        return {"input_ids": tokens, "attention_mask": torch.ones_like(tokens), "use_cache": False}
    if source is None:
        raise InputError(f"{info.name} is an encoder-decoder: its attribution needs a source")
    src = torch.tensor([list(source)], device=device)  # (1, S)
    return {"input_ids": src, "attention_mask": torch.ones_like(src),
            "decoder_input_ids": tokens, "use_cache": False}  # fmt: skip


def _after(model: PreTrainedModel, layout: Layout, stream: Stream, y: torch.Tensor) -> torch.Tensor:
    """What comes between the final norm and the unembedding (a projection, a scale)."""
    if layout.project is not None:
        path = find(dict(model.named_modules()), layout.project)
        project = None if path is None else model.get_submodule(path)
        if isinstance(project, nn.Linear):
            stream.linear(project.weight)
            y = project(y)
    factor = layout.scale(model.config.get_text_config())
    if factor != 1.0:
        stream.scale(factor)
        y = y * factor
    return y


def _final_logits_bias(model: PreTrainedModel, V: int, device: torch.device) -> torch.Tensor:
    """(V,) float64: a model's own bias on its logits besides the unembedding's (BART-style
    `final_logits_bias`), zeros for most models."""
    extra = getattr(model, "final_logits_bias", None)
    if not isinstance(extra, torch.Tensor):
        return torch.zeros(V, dtype=torch.float64, device=device)
    return extra.reshape(-1)[:V].double()


def _logit_bias(model: PreTrainedModel, unembed: nn.Module) -> torch.Tensor:
    """(V,) float64: every bias the logits get: the unembedding's and the model's own."""
    weight = weight_of(unembed)
    V, device = weight.size(0), weight.device
    own = getattr(unembed, "bias", None)
    out = _final_logits_bias(model, V, device)
    return out if not isinstance(own, torch.Tensor) else out + own.double()
