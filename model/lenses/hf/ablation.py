"""Head ablation on a Hugging Face model, without hooks and without touching the shared model.

A head's output reaches the rest of the network only through the attention's output
projection W^O (§3.2.2: MultiHead = Concat(head_1, …, head_h) W^O): the input of W^O is the
heads' outputs side by side, d_head values each. Zeroing head i's d_head input columns of W^O
(rows of a GPT-2 Conv1D, whose weight is stored (in, out)) is therefore exactly zeroing its
output, as a head mask did before transformers 5 removed `head_mask`; W^O's bias stays, as
it did then.

The zeroed weights live in a private copy of the model made for one request: the module tree
is copied with every parameter and buffer shared read-only with the shared model, and only
the output projections of the layers with an ablated head get new, zeroed weights. The shared
model is never changed, so sessions running it at the same time see nothing of the ablation.

Where each layer's output projection sits is stated per architecture (`OUTPUT_PROJECTIONS`),
never guessed; an architecture not listed, or whose layers share one set of weights, cannot
be ablated, and `reason` says why.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.pytorch_utils import Conv1D

from attnlens.model.budget import RECORD_VAR, RecordTooLargeError, budget_bytes
from attnlens.model.decoding.heads import HeadRef, check_head
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind, ModelInfo


def _each(paths: dict[Kind, str], *model_types: str) -> dict[str, dict[Kind, str]]:
    return {model_type: paths for model_type in model_types}


_BART: dict[Kind, str] = {
    "encoder_self": "encoder.layers.{layer}.self_attn.out_proj",
    "decoder_self": "decoder.layers.{layer}.self_attn.out_proj",
    "cross": "decoder.layers.{layer}.encoder_attn.out_proj",
}
# model_type → kind → the output projection of each layer, as a module path ending (the path
# before it depends on the head class: BertModel's encoder.layer.0… is bert.encoder.layer.0…
# in BertForMaskedLM). Each is checked on a tiny model of that architecture in the tests.
OUTPUT_PROJECTIONS: dict[str, dict[Kind, str]] = {
    **_each({"encoder_self": "encoder.layer.{layer}.attention.output.dense"}, "bert", "roberta",
            "xlm-roberta", "electra", "roformer", "deberta", "deberta-v2"),
    "distilbert": {"encoder_self": "transformer.layer.{layer}.attention.out_lin"},
    "mpnet": {"encoder_self": "encoder.layer.{layer}.attention.attn.o"},
    "modernbert": {"encoder_self": "layers.{layer}.attn.Wo"},
    **_each({"decoder_self": "h.{layer}.attn.c_proj"}, "gpt2", "gpt_bigcode"),
    "gpt_neo": {"decoder_self": "h.{layer}.attn.attention.out_proj"},
    **_each({"decoder_self": "h.{layer}.attn.out_proj"}, "gptj", "codegen"),
    "gpt_neox": {"decoder_self": "layers.{layer}.attention.dense"},
    **_each({"decoder_self": "h.{layer}.self_attention.dense"}, "bloom", "falcon"),
    "mpt": {"decoder_self": "blocks.{layer}.attn.out_proj"},
    "ctrl": {"decoder_self": "h.{layer}.multi_head_attention.dense"},
    "opt": {"decoder_self": "decoder.layers.{layer}.self_attn.out_proj"},
    **_each({"decoder_self": "layers.{layer}.self_attn.out_proj"}, "biogpt", "xglm"),
    **_each({"decoder_self": "layers.{layer}.self_attn.o_proj"}, "llama", "mistral", "qwen2",
            "qwen3", "gemma", "gemma2", "starcoder2"),
    "phi": {"decoder_self": "layers.{layer}.self_attn.dense"},
    **_each(_BART, "bart", "mbart", "marian", "pegasus", "m2m_100", "blenderbot-small"),
    "t5": {
        "encoder_self": "encoder.block.{layer}.layer.0.SelfAttention.o",
        "decoder_self": "decoder.block.{layer}.layer.0.SelfAttention.o",
        "cross": "decoder.block.{layer}.layer.1.EncDecAttention.o",
    },
}  # fmt: skip
SHARED_LAYERS = {"albert": "ALBERT"}  # one set of weights serves every layer
# model_type → its embeddings and its list of layers, beside each other in the base model: an
# ablation whose first head is in layer l runs from layer l on the unablated layers' output
RESUMABLE: dict[str, tuple[str, str]] = {"bert": ("embeddings", "encoder.layer")}


def ablation_support() -> str:
    """Which models' heads can be ablated, in words fit to show a user."""
    shared = ", ".join(f"{name} ({kind})" for kind, name in SHARED_LAYERS.items())
    return (
        "Heads can be silenced on attnlens' own models and on Hugging Face models of these "
        f"architectures: {', '.join(sorted(OUTPUT_PROJECTIONS))}. Not on {shared}, whose layers "
        "share one set of weights, nor on an architecture not listed (attnlens does not know "
        "where its attention output projection is); there only Voita's confidence is measured."
    )


class Given(nn.Module):
    """Stands for a private copy's embeddings: hands back the hidden states it was given (what
    the layers before the first ablated one computed, unablated)."""

    def __init__(self, hidden: torch.Tensor) -> None:
        super().__init__()
        self.hidden = hidden

    def forward(self, *args: object, **kwargs: object) -> torch.Tensor:
        return self.hidden


def weight_of(module: nn.Module) -> torch.Tensor:
    """A linear module's weight."""
    weight = module.weight
    assert isinstance(weight, torch.Tensor), "an output projection has a weight"
    return weight


@dataclass(frozen=True)
class Projection:
    """One attention's output projection W^O: where it is, and how its input splits by head."""

    path: str  # the module's name in the model
    heads: int
    d_head: int  # input width of each head
    rows: bool  # weight stored (in, out) (GPT-2's Conv1D): a head's slice is rows, not columns

    def zeroed(self, weight: torch.Tensor, heads: Sequence[int]) -> nn.Parameter:
        """A new weight equal to weight with the given heads' input slices zeroed."""
        out = weight.detach().clone()
        for head in heads:
            span = slice(head * self.d_head, (head + 1) * self.d_head)
            (out[span] if self.rows else out[:, span]).zero_()
        return nn.Parameter(out, requires_grad=False)


@dataclass(frozen=True)
class OutputProjections:
    """Every layer's output projection of a model, per kind of attention; or why they cannot be
    used (`reason`, fit to show a user)."""

    name: str
    info: ModelInfo
    found: Mapping[tuple[Kind, int], Projection]
    reason: str | None = None

    def without(self, model: PreTrainedModel, heads: Sequence[HeadRef]) -> PreTrainedModel:
        """model itself when no head is ablated; else a private copy whose ablated heads'
        slices of W^O are zeroed, every other tensor shared with model (which stays as it was)."""
        if not heads:
            return model
        if self.reason is not None:
            raise InputError(f"cannot ablate {', '.join(map(str, heads))}: {self.reason}")
        by_layer = self._by_layer(heads)
        self._check_size(model, by_layer)
        shared = itertools.chain(model.parameters(), model.buffers())
        twin = copy.deepcopy(model, {id(t): t for t in shared})  # new modules, same tensors
        for (kind, layer), ablated in by_layer.items():
            proj = self.found[kind, layer]
            module = twin.get_submodule(proj.path)
            module.weight = proj.zeroed(weight_of(module), ablated)
        return twin

    def variants(
        self, model: PreTrainedModel, ablations: Sequence[Sequence[HeadRef]]
    ) -> Iterator[PreTrainedModel]:
        """`without` for each set of heads in turn, one private copy made for all of them: its
        output projections are set for each set (zeroed slices where the set ablates a head,
        the shared weight elsewhere) before it is handed over. Use each model before asking
        for the next; model itself stands for a set of none."""
        twin: PreTrainedModel | None = None
        for heads in ablations:
            if not heads:
                yield model
                continue
            if self.reason is not None:
                raise InputError(f"cannot ablate {', '.join(map(str, heads))}: {self.reason}")
            by_layer = self._by_layer(heads)
            self._check_size(model, by_layer)
            if twin is None:
                shared = itertools.chain(model.parameters(), model.buffers())
                twin = copy.deepcopy(model, {id(t): t for t in shared})
            for key, proj in self.found.items():
                weight = model.get_submodule(proj.path).weight
                module = twin.get_submodule(proj.path)
                module.weight = proj.zeroed(weight, by_layer[key]) if key in by_layer else weight
            yield twin

    def resumable(self, model_type: str) -> bool:
        """Whether a private copy of this model can run a slice of its layers (`layers`)."""
        return model_type in RESUMABLE and ("encoder_self", 0) in self.found

    @contextlib.contextmanager
    def layers(
        self, twin: PreTrainedModel, model_type: str, kept: slice, given: torch.Tensor | None
    ) -> Iterator[PreTrainedModel]:
        """A private copy (never the shared model) running only its layers `kept`, from the
        hidden states `given` instead of its embeddings (given None: from the embeddings)."""
        embeddings, layers = RESUMABLE[model_type]
        first = self.found["encoder_self", 0].path  # …encoder.layer.0.attention.output.dense
        base_path = first[: first.index(f"{layers}.0.")].rstrip(".")
        base = twin.get_submodule(base_path) if base_path else twin
        holder_path, name = layers.rsplit(".", 1)
        holder = base.get_submodule(holder_path)
        all_layers, all_embeddings = getattr(holder, name), getattr(base, embeddings)
        setattr(holder, name, nn.ModuleList(list(all_layers)[kept]))
        if given is not None:
            setattr(base, embeddings, Given(given))
        try:
            yield twin
        finally:
            setattr(holder, name, all_layers)
            setattr(base, embeddings, all_embeddings)

    def _by_layer(self, heads: Sequence[HeadRef]) -> dict[tuple[Kind, int], list[int]]:
        """The ablated heads grouped by (kind, layer), each checked against the model."""
        kinds = self.info.kinds
        grouped: dict[tuple[Kind, int], list[int]] = {}
        for ref in heads:  # each kind its own stack's sizes (distilbart: 12 × 16, 3 × 16)
            sizes = self.info.shape(ref.kind) if ref.kind in kinds else (0, 0)
            check_head(ref, kinds, *sizes)
            grouped.setdefault((ref.kind, ref.layer), []).append(ref.head)
        return grouped

    def _check_size(
        self, model: PreTrainedModel, by_layer: Mapping[tuple[Kind, int], object]
    ) -> None:
        """Refuse, naming the sizes, when the new projection weights pass the memory budget."""
        needed = 0
        for key in by_layer:
            weight = weight_of(model.get_submodule(self.found[key].path))
            needed += weight.numel() * weight.element_size()
        limit, layers = budget_bytes(), len(by_layer)
        if needed > limit:
            raise RecordTooLargeError(
                f"ablating heads in {layers} layer{'s' * (layers != 1)} of {self.name} needs a "
                f"private copy of their output projections, {needed / 2**20:.3g} MB, above the "
                f"limit of {limit / 2**20:.3g} MB ({RECORD_VAR}); ablate heads in fewer layers"
            )


def output_projections(
    model: PreTrainedModel, model_type: str, info: ModelInfo
) -> OutputProjections:
    """Each layer's W^O for every kind the model has, found by the architecture's own path; an
    OutputProjections with a reason when the architecture is not known or the model differs."""
    name = info.name
    if model_type in SHARED_LAYERS:
        return OutputProjections(name, info, {}, (
            f"{SHARED_LAYERS[model_type]} shares one set of weights between all its layers, so "
            "a head of one layer cannot be zeroed without zeroing it in every layer"
        ))  # fmt: skip
    paths = OUTPUT_PROJECTIONS.get(model_type)
    if paths is None:
        return OutputProjections(name, info, {}, (
            f"attnlens does not know where the attention output projection of {model_type} "
            "models is, and ablates a head only by zeroing its share of that projection (known: "
            f"{', '.join(sorted(OUTPUT_PROJECTIONS))})"
        ))  # fmt: skip
    modules = dict(model.named_modules())
    found: dict[tuple[Kind, int], Projection] = {}
    for kind in info.kinds:
        if kind not in paths:
            return OutputProjections(name, info, {}, f"{model_type} has no {kind} attention")
        layers, heads = info.shape(kind)
        for layer in range(layers):
            located = _locate(modules, paths[kind].format(layer=layer), heads, model_type)
            if isinstance(located, str):
                return OutputProjections(name, info, {}, located)
            found[kind, layer] = located
    return OutputProjections(name, info, found, _shared_between_layers(modules, found))


def _locate(
    modules: Mapping[str, nn.Module], ending: str, heads: int, model_type: str
) -> Projection | str:
    """The one module whose path ends in `ending`, as a Projection; else why not."""
    paths = [p for p in modules if p == ending or p.endswith("." + ending)]
    if len(paths) != 1:
        return (
            f"this {model_type} model has {len(paths)} modules at …{ending}, where its attention "
            "output projection should be exactly one"
        )
    module = modules[paths[0]]
    rows = isinstance(module, Conv1D)
    if not (rows or isinstance(module, nn.Linear)):
        return f"{paths[0]} is a {type(module).__name__}, not a linear output projection"
    width = int(weight_of(module).shape[0 if rows else 1])
    if width % heads:
        return f"{paths[0]} reads {width} inputs, which do not split into {heads} heads"
    return Projection(paths[0], heads, width // heads, rows)


def _shared_between_layers(
    modules: Mapping[str, nn.Module], found: Mapping[tuple[Kind, int], Projection]
) -> str | None:
    """Why not, when two layers' projections are one module (weights shared between layers)."""
    seen: dict[int, str] = {}
    for proj in found.values():
        key = id(modules[proj.path].weight)
        if key in seen:
            return (
                f"{seen[key]} and {proj.path} share one weight, so a head of one layer cannot "
                "be zeroed without zeroing it in the other"
            )
        seen[key] = proj.path
    return None
