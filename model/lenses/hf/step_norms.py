"""What each key a Hugging Face model's decoding step read gives each head (record/norms.py): the
values the step's attention read are those its key/value cache holds (after W_V and its bias, at
the keys' width under grouped-query attention), carried through each query head's own slice of
the layer's W^O (hf/heads.py finds it), as model/decoding/carried.py keeps them step by step."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import PreTrainedModel

from attnlens.model.decoding.carried import CarriedNorms, start_norms
from attnlens.model.lenses.hf.heads import HeadsError, output_weights
from attnlens.record.trace import ModelInfo


def run_norms(model: PreTrainedModel, info: ModelInfo) -> tuple[CarriedNorms | None, str | None]:
    """A run's norms before its first feed (each decoder layer's W^O of self- and cross-attention
    factored once; the run's own model, its ablated heads' slices zeroed), or why there are none."""
    try:
        found = output_weights(model, str(model.config.model_type), info)
        L, H = info.shape("decoder_self")
        own = [found.weight("decoder_self", i) for i in range(L)]
        cross = [found.weight("cross", i) for i in range(L)] if "cross" in info.kinds else []
        return start_norms(H, own, cross), None
    except (HeadsError, KeyError, ValueError) as why:
        return None, f"attnlens cannot take this model's values: {why}"


def norms_missing(model: PreTrainedModel, info: ModelInfo) -> str | None:
    """Why a run of this model would hold no norms (None: it will hold them)."""
    return run_norms(model, info)[1]


def cache_values(cache: object) -> tuple[list[torch.Tensor], list[torch.Tensor] | None]:
    """Per decoder layer, the self-attention values (B, H_kv, K, d) the cache holds and (an
    encoder-decoder's) the memory's (B, H_kv, S, d); a ValueError where they cannot be read."""
    own = getattr(cache, "self_attention_cache", cache)
    memory = getattr(cache, "cross_attention_cache", None)
    return _layer_values(own), None if memory is None else _layer_values(memory)


def _layer_values(cache: object) -> list[torch.Tensor]:
    layers = getattr(cache, "layers", None)
    if not layers:
        raise ValueError(f"a {type(cache).__name__} keeps no layers of values")
    values = [getattr(layer, "values", None) for layer in layers]
    if not all(isinstance(v, torch.Tensor) and v.dim() == 4 for v in values):
        raise ValueError(f"a {type(cache).__name__}'s layers keep no (B, H, K, d) values")
    return values  # type: ignore[return-value]


def fed_values(values: Sequence[torch.Tensor], n: int) -> list[torch.Tensor]:
    """Each layer's values of the n newest keys, (B, H_kv, n, d). A sliding-window layer keeps
    only its window: keys fed before it are zeros here (their weight is 0 at every later step)."""
    out = []
    for v in values:
        last = v[:, :, -n:]
        if last.size(2) < n:
            last = torch.nn.functional.pad(last, (0, 0, n - last.size(2), 0))
        out.append(last)
    return out
