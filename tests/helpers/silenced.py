"""An independent way to silence a Hugging Face attention head, for checking attnlens' ablation
(which zeroes the head's share of the output projection W^O): zero the head's value
projection instead (weights and bias), so that every value the head averages is 0 and its
output is exactly 0 whatever it attends to. Done on a deep copy of a reference model.

The tiny random models' heads barely change their output (weights drawn with std 0.02), so the
models compared here are "loud": every matrix scaled up, each head then moving the output by
far more than float32 rounding."""

from __future__ import annotations

import atexit
import copy
import functools
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import transformers as T
from transformers.pytorch_utils import Conv1D

from helpers.hf_models import reference
from helpers.hf_zoo import zoo_reference

LOUD = 10.0  # how much every matrix of a loud model is scaled
LOUD_T5 = 3.0  # T5 does not divide its attention scores by √d_k: 10 would make them chaotic
Reference = Callable[[], tuple[T.PreTrainedModel, T.PreTrainedTokenizerBase]]
REFERENCES: dict[str, Reference] = {  # tests/helpers' tiny models, and zoo-NAME from the zoo
    **{k: functools.partial(reference, k) for k in ("gpt2", "bert", "bart", "t5", "llama")},
    **{f"zoo-{k}": functools.partial(zoo_reference, k) for k in ("distilbert", "llama")},
}


@functools.cache
def loud(name: str) -> tuple[Path, T.PreTrainedModel]:
    """A folder holding the named tiny model with every matrix scaled up, and that model
    (eager attention, eval mode: the reference to compare with)."""
    model, tok = REFERENCES[name]()
    model = copy.deepcopy(model)
    scale = LOUD_T5 if model.config.model_type == "t5" else LOUD
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() >= 2:
                weight.mul_(scale)
    folder = Path(tempfile.mkdtemp(prefix=f"attnlens-loud-{name}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder, model.eval()


def d_head(model: T.PreTrainedModel) -> int:
    """The width of one head, as the config states it."""
    config = model.config.get_text_config()
    for key in ("head_dim", "d_kv"):
        if isinstance(getattr(config, key, None), int):
            return int(getattr(config, key))
    heads = next(getattr(config, k) for k in ("num_attention_heads", "n_head", "n_heads")
                 if isinstance(getattr(config, k, None), int))  # fmt: skip
    return int(config.hidden_size) // int(heads)


VALUES: dict[str, dict[str, str]] = {  # model_type → kind → the value projection of a layer
    "gpt2": {"decoder_self": "transformer.h.{layer}.attn.c_attn"},  # Conv1D (d, 3d): q, k, v
    "bert": {"encoder_self": "encoder.layer.{layer}.attention.self.value"},
    "distilbert": {"encoder_self": "transformer.layer.{layer}.attention.v_lin"},
    "llama": {"decoder_self": "model.layers.{layer}.self_attn.v_proj"},
    "bart": {
        "encoder_self": "model.encoder.layers.{layer}.self_attn.v_proj",
        "decoder_self": "model.decoder.layers.{layer}.self_attn.v_proj",
        "cross": "model.decoder.layers.{layer}.encoder_attn.v_proj",
    },
    "t5": {
        "encoder_self": "encoder.block.{layer}.layer.0.SelfAttention.v",
        "decoder_self": "decoder.block.{layer}.layer.0.SelfAttention.v",
        "cross": "decoder.block.{layer}.layer.1.EncDecAttention.v",
    },
}


def values_zeroed(
    model: T.PreTrainedModel, kind: str, layer: int, value_heads: Sequence[int]
) -> T.PreTrainedModel:
    """A copy of model whose value projection of (kind, layer) gives 0 for each of value_heads
    (a grouped-query model's key/value heads: every query head of the group is silenced)."""
    width = d_head(model)
    twin = copy.deepcopy(model).eval()
    path = VALUES[model.config.model_type][kind].format(layer=layer)
    module = twin.get_submodule(path)
    with torch.no_grad():
        for head in value_heads:
            if isinstance(module, Conv1D):  # weight (in, 3d): the values are the last d outputs
                d = module.weight.shape[1] // 3
                span = slice(2 * d + head * width, 2 * d + (head + 1) * width)
                module.weight[:, span] = 0.0
            else:  # nn.Linear, weight (out, in)
                span = slice(head * width, (head + 1) * width)
                module.weight[span] = 0.0
            if module.bias is not None:
                module.bias[span] = 0.0
    return twin
