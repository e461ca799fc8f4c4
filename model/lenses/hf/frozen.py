"""One position's residual stream carried through a Hugging Face model's own attention outputs
and norms (model/net/stream.py): each attention's heads as parts, checked against W^O's own
output, and a norm frozen as whichever form reproduces the norm's own output on that stream."""

from __future__ import annotations

import torch
from torch import nn

from attnlens.model.lenses.hf.heads import LayerHeads, OutputWeights
from attnlens.model.net.contributions import head_slices, head_vectors
from attnlens.model.net.stream import MATCH, Stream
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind


def attention_parts(
    stream: Stream,
    projected: OutputWeights,
    where: tuple[Kind, int],
    heads_of: LayerHeads,
    at: int,
    post: nn.Module | None,
) -> torch.Tensor:
    """One attention's heads at position `at` (and W^O's bias), carried through the norm after
    the attention where there is one (post), added to the stream; returns what the attention
    added there, (d_model,) as the model computed it, its parts checked against W^O's own
    output."""
    kind, layer = where
    weight, bias = projected.found[where]
    out = heads_of.output[:, at : at + 1]  # (H, 1, d_head)
    H = out.size(0)
    heads = head_vectors(head_slices(weight, H), out)[:, 0]  # (H, d_model)
    mine = Stream(("head", kind, layer, 0), heads[0])
    mine.add([("head", kind, layer, h) for h in range(1, H)], heads[1:])
    if bias is not None:
        mine.add([("bias", "attention output")], bias)
    own: torch.Tensor = projected.modules[where](out[:, 0].reshape(1, -1).to(weight.dtype))
    mine.check(own[0], f"{kind} layer {layer}'s attention output")
    added = own[0]
    if post is not None:
        added = post(own)[0]
        freeze(mine, post, added, f"{kind} layer {layer}'s output")
    stream.extend(mine)
    return added


def freeze(stream: Stream, norm: nn.Module, y: torch.Tensor, what: str) -> str:
    """Carry the stream through a norm (`what`: the final one, or the one after an attention),
    its statistics frozen: whichever of a LayerNorm, an RMSNorm (x · w / rms) or Gemma's
    RMSNorm (x · (1 + w) / rms) gives the norm's own output y on this very stream; refuses when
    none does."""
    eps = next((float(v) for a in ("eps", "variance_epsilon", "epsilon")
                if isinstance(v := getattr(norm, a, None), (int, float))), None)  # fmt: skip
    weight, bias = getattr(norm, "weight", None), getattr(norm, "bias", None)
    name = type(norm).__name__
    if eps is None or not isinstance(weight, torch.Tensor):
        raise InputError(f"the {what} norm ({name}) is not one attnlens can state")
    x, want = stream.total(), y.double()
    var, ms = x.var(unbiased=False), x.pow(2).mean()
    as_layer = (x - x.mean()) / torch.sqrt(var + eps) * weight.double()
    as_layer = as_layer + (0 if bias is None else bias.double())
    said = f"the {what} norm"
    candidates = [
        ("LayerNorm", as_layer, lambda: stream.layer_norm(weight, bias, eps, y, said)),
        ("RMSNorm", x / torch.sqrt(ms + eps) * weight.double(),
         lambda: stream.rms_norm(weight, eps, y, said)),
        ("RMSNorm (1 + w)", x / torch.sqrt(ms + eps) * (1 + weight.double()),
         lambda: stream.rms_norm(1 + weight.double(), eps, y, said)),
    ]  # fmt: skip
    for kind, direct, carry in candidates:
        if float((direct - want).abs().max()) <= MATCH * max(1.0, float(want.abs().max())):
            carry()
            held = "mean and scale" if kind == "LayerNorm" else "scale"
            return f"the {what} {kind} ({name}), its {held} frozen (pre-norm)"
    raise InputError(
        f"the {what} norm ({name}) is neither a LayerNorm nor an RMSNorm attnlens can state: "
        "no direct logit attribution"
    )
