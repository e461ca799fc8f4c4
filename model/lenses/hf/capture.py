"""Attention recorded from the kernel a Hugging Face model really runs, by value.

transformers calls a model's attention through its attention-function registry
(AttentionInterface) with the queries and keys exactly as the kernel reads them: after rotary
embeddings, keys at their grouped width. CAPTURE is such a function: it runs scaled dot-product
attention for the layer's output (on the CPU the very flash kernel `sdpa` dispatches to, which
also returns each row's log-sum-exp) and hands back, in the weights slot that
`output_attentions` carries, a LayerScores record (attnlens.record.scores) from which every
head's weights are exact on demand. No hook, no module attribute, nothing kept between calls:
the registry entry is a pure function, and the model's own implementation is put back after.

A layer that caps its logits (Gemma 2's soft-capping) has no fused kernel: transformers runs it
eagerly, and so does CAPTURE, a block of query rows at a time, with the cap in the record.
A relative-position bias handed to the kernel (T5's) is kept by distance, one number per head
and distance j − i, after checking it depends on nothing else. What the record cannot express
(ALiBi or another bias folded into the mask, learned sink logits, a mask that is neither causal
nor a sliding window) raises UnexpressibleError, and the lens records that model's eager weights
instead, saying why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn
from transformers import AttentionInterface
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

from attnlens.model.heap import give_back_over, mapped_copy
from attnlens.record.scores import KEPT_DTYPES, LayerScores, MaskRule

CAPTURE = "attnlens_capture"
CAPTURE_HEADS = "attnlens_capture_heads"  # CAPTURE, the values and heads' outputs beside
# the keyword by which a forward pass hands CAPTURE_HEADS what takes a layer's norms at once
TAKE_NORMS = "attnlens_take_norms"
EXTRAS = {  # keyword arguments that change the scores beyond what the record states
    "s_aux": "it adds learned sink logits",
    "sinks": "it adds learned sink logits",
}
MASK_ROWS = 1024  # rows of the mask compared with a rule at a time
# what the CPU's flash kernel reads (as sdpa dispatches it), returning a float32 log-sum-exp
FLASH_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


class UnexpressibleError(Exception):
    """The layer's scores hold something a LayerScores record cannot state exactly."""


class TakeNorms(Protocol):
    """What takes one layer's norms inside its attention call: (H, K) what each key gives each
    head and (H, Q) what each head writes, from the values the call received (H_kv, K, d_head)
    and its heads' outputs (H, Q, d_head); None where it cannot tell the layer."""

    def __call__(
        self, module: nn.Module, values: torch.Tensor, output: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor] | None: ...


@dataclass(frozen=True)
class HeldHeads:
    """What one layer's heads read and wrote, held until the pass ends."""

    values: torch.Tensor  # (H_kv, K, d_head): the values the attention call received
    output: torch.Tensor  # (H, Q, d_head): each head's output, before W^O


@dataclass(frozen=True)
class CapturedHeads:
    """CAPTURE_HEADS's record of one layer: its scores, and the norms of what each head carries
    and writes (record/norms.py: (H, K) carried, (H, Q) written), taken in the call; or, where
    they could not be, what its heads read and wrote, from which the trace takes them after
    the pass."""

    scores: LayerScores
    heads: tuple[torch.Tensor, torch.Tensor] | HeldHeads


def capture_heads(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, CapturedHeads]:
    """CAPTURE, with the layer's norms taken by what the pass handed over as TAKE_NORMS, while
    its values and heads' outputs are at hand; where none was handed over (a model that does
    not pass its keywords down) or it cannot tell the layer, the values and outputs handed
    back instead (held until the pass ends: the size of the queries and keys again)."""
    take: TakeNorms | None = kwargs.pop(TAKE_NORMS, None)
    out, scores = capture_attention(module, query, key, value, attention_mask, **kwargs)
    heads = out[0].transpose(0, 1)  # (H, Q, d_head)
    taken = None if take is None else take(module, value[0], heads)
    return out, CapturedHeads(scores, taken or HeldHeads(value[0].detach(), heads))


def capture_attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: object,
) -> tuple[torch.Tensor, LayerScores]:
    """The layer's output (B, Q, H, d) and what its weights were computed from."""
    extra = [name for name in EXTRAS if kwargs.get(name) is not None]
    if extra:
        raise UnexpressibleError(EXTRAS[extra[0]])
    if query.size(0) != 1 or dropout:
        raise UnexpressibleError("it ran a batch, or with dropout")
    Q, K, d = query.size(2), key.size(2), query.size(3)
    scale = float(scaling) if scaling is not None else 1 / math.sqrt(d)
    cap = _softcap(kwargs.get("softcap"))
    causal = bool(getattr(module, "is_causal", False) if is_causal is None else is_causal)
    rule = mask_rule(attention_mask, Q, K, causal, kwargs.get("sliding_window"))
    bias = by_distance(kwargs.get("position_bias"), query.size(1), Q, K)
    if cap is not None:
        out, lse = _capped(query, key, value, scale, cap, rule)
    elif bias is not None:
        out, lse = _biased(query, key, value, scale, bias, rule)
    else:
        out, lse = _kernel(query, key, value, attention_mask, scale, rule)  # (1,H,Q,d), (1,H,Q)
    q, dtype = kept(query[0])
    k, _ = kept(key[0])
    scores = LayerScores(
        q=q,
        k=k,
        lse=_numpy(lse[0]),  # the kernel's, float32: the trace's summaries make it exact
        scale=scale,
        mask=rule,
        softcap=cap,
        bias=None if bias is None else _numpy(bias),
        dtype=dtype,
    )
    give_back_over()  # the pass's freed buffers, before they strand the next copies
    return out.transpose(1, 2).contiguous(), scores


def by_distance(bias: object, H: int, Q: int, K: int) -> torch.Tensor | None:
    """(H, Q + K − 1): a (1, H, Q, K) score bias as one number per head and distance j − i
    (at [h, j − i + Q − 1]); None for no bias or one of zeros (T5's layers without their own
    table hand on zeros to cross-attention). A bias that depends on more than the distance
    raises: the record could not restate it."""
    if bias is None:
        return None
    if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (1, H, Q, K):
        shape = tuple(bias.shape) if isinstance(bias, torch.Tensor) else type(bias).__name__
        raise UnexpressibleError(f"it adds a score bias of shape {shape}")
    b = bias[0].float()  # (H, Q, K)
    if not bool(b.any()):
        return None
    table = torch.cat([b[:, 1:, 0].flip(-1), b[:, 0, :]], dim=-1)  # distances 1 − Q .. K − 1
    cols = torch.arange(K)
    for start in range(0, Q, MASK_ROWS):
        rows = torch.arange(start, min(start + MASK_ROWS, Q))
        restated = table[:, cols[None, :] - rows[:, None] + (Q - 1)]  # (H, r, K)
        if not torch.equal(restated, b[:, start : start + MASK_ROWS]):
            raise UnexpressibleError("it adds a score bias that is not by relative position")
    return table.contiguous()


def _softcap(value: object) -> float | None:
    """The cap a layer puts on its logits (None: none); one the record cannot state raises."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
        return float(value)
    raise UnexpressibleError(f"it caps its logits with {value!r}, not a positive number")


def _numpy(x: torch.Tensor) -> np.ndarray:
    """A float32 copy kept by the record, in pages of its own (model/heap.py)."""
    return mapped_copy(x.detach().float().cpu().numpy())


def kept(x: torch.Tensor) -> tuple[np.ndarray, str]:
    """A copy of queries or keys at the dtype the kernel read them, and that dtype's name
    (record/scores.py: bfloat16 as its raw 16-bit words; other dtypes as float32), in pages of
    its own (model/heap.py)."""
    x = x.detach()
    name = str(x.dtype).removeprefix("torch.")
    if name not in KEPT_DTYPES:
        return mapped_copy(x.float().cpu().numpy()), "float32"
    if name == "bfloat16":
        return mapped_copy(x.view(torch.int16).cpu().numpy().view(np.uint16)), name
    return mapped_copy(x.cpu().numpy()), name


def mask_rule(mask: torch.Tensor | None, Q: int, K: int, causal: bool, window: object) -> MaskRule:
    """The rule the kernel's mask follows: none, causal, or a sliding window; what sdpa
    applies without a mask is causal only for a causal module reading more than one row."""
    offset = K - Q
    if mask is None:
        if causal and Q > 1 and offset:
            raise UnexpressibleError("it reads a cache")
        return MaskRule(causal=causal and Q > 1, offset=offset)
    allowed = _allowed(mask, Q, K)
    candidates = [MaskRule(False, None, offset), MaskRule(True, None, offset)]
    if isinstance(window, int) and window > 0:
        candidates += [MaskRule(True, w, offset) for w in (window, window + 1)]
    for rule in candidates:
        if _follows(allowed, rule):
            return rule
    raise UnexpressibleError("its mask is neither causal nor a sliding window")


def _allowed(mask: torch.Tensor, Q: int, K: int) -> torch.Tensor:
    """(Q, K) bool of a (1, 1, Q, K) boolean or additive mask; a mask that differs between
    heads, or adds anything but 0 and -inf (a bias folded in), is not a mask."""
    if mask.dim() != 4 or mask.size(0) != 1 or mask.size(1) != 1:
        raise UnexpressibleError("its mask differs between heads")
    m = mask[0, 0, :Q, :K]
    if m.dtype == torch.bool:
        return m
    blocked = m <= torch.finfo(m.dtype).min / 2
    if not bool(((m == 0) | blocked).all()):
        raise UnexpressibleError("it adds a bias to its scores (ALiBi, say)")
    return ~blocked


def _follows(allowed: torch.Tensor, rule: MaskRule) -> bool:
    """Whether the mask is exactly the rule, compared a block of rows at a time."""
    Q, K = allowed.shape
    cols = np.arange(K)
    for start in range(0, Q, MASK_ROWS):
        rows = np.arange(start, min(start + MASK_ROWS, Q))
        want = rule.allowed(rows, cols)
        got = allowed[start : start + MASK_ROWS].cpu().numpy()
        if not (got.all() if want is None else np.array_equal(got, want)):
            return False
    return True


def _kernel(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None,
    scale: float,
    rule: MaskRule,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention and each row's log-sum-exp: (1, H, Q, d), (1, H, Q).
    The CPU's flash kernel reads grouped keys as they are (as sdpa's enable_gqa has it, to
    the bit): copying them once per query head took a layer's worth of memory each time."""
    additive = None
    if mask is not None:
        m = mask[:, :, : q.size(2), : k.size(2)]
        additive = m if m.dtype == q.dtype else _additive(m, q.dtype)
    if q.device.type == "cpu" and q.dtype in FLASH_DTYPES:
        causal = mask is None and rule.causal and rule.offset == 0
        flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
        out, lse = flash(q, k, v, 0.0, causal, attn_mask=additive, scale=scale)
        return out, lse
    group = q.size(1) // k.size(1)
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)  # (1, H, K, d)
    return _math(q, k, v, additive, scale, rule)


def _additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            ~mask, float("-inf")
        )
    return mask.to(dtype)


def _math(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    additive: torch.Tensor | None,
    scale: float,
    rule: MaskRule,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Off the CPU's flash kernel: sdpa's output, and the log-sum-exp a block of rows at a time
    (one block of scores at once)."""
    causal = additive is None and rule.causal and rule.offset == 0
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=additive, is_causal=causal, scale=scale
    )  # (1, H, Q, d)
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)  # (1, H, Q)
    cols = np.arange(k.size(2))
    for start in range(0, q.size(2), MASK_ROWS):
        rows = np.arange(start, min(start + MASK_ROWS, q.size(2)))
        s = (q[:, :, rows].float() @ k.float().transpose(-1, -2)) * scale  # (1, H, r, K)
        ok = rule.allowed(rows, cols)
        if ok is not None:
            s = s.masked_fill(~torch.as_tensor(ok, device=q.device), float("-inf"))
        lse[:, :, rows] = torch.logsumexp(s, dim=-1)
    return out, lse


def _capped(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, cap: float, rule: MaskRule
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention with soft-capped logits, as transformers' eager path computes it (scores,
    cap · tanh(score / cap), the mask, a float32 softmax, the values), a block of query rows
    at a time: (1, H, Q, d), (1, H, Q)."""
    group = q.size(1) // k.size(1)
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)  # (1, H, K, d)
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)  # (1, H, Q)
    cols = np.arange(k.size(2))
    for start in range(0, q.size(2), MASK_ROWS):
        rows = np.arange(start, min(start + MASK_ROWS, q.size(2)))
        s = (q[:, :, rows] @ k.transpose(-1, -2)) * scale  # (1, H, r, K)
        s = torch.tanh(s / cap) * cap
        ok = rule.allowed(rows, cols)
        if ok is not None:
            s = s.masked_fill(~torch.as_tensor(ok, device=q.device), float("-inf"))
        s = s.float()
        lse[:, :, rows] = torch.logsumexp(s, dim=-1)
        p = torch.softmax(s, dim=-1).to(v.dtype)
        out[:, :, rows] = p @ v
    return out, lse


def _biased(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    bias: torch.Tensor,
    rule: MaskRule,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention with a bias by distance (and the mask's rule) added to the scores, through
    the CPU's flash kernel where there is one, a block of query rows at a time (the bias and
    mask of one block at once): (1, H, Q, d), (1, H, Q)."""  # fmt: skip
    Q, K = q.size(2), k.size(2)
    group = q.size(1) // k.size(1)
    kk, vv = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)  # (1, H, K, d)
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)  # (1, H, Q)
    cols = torch.arange(K, device=q.device)
    for start in range(0, Q, MASK_ROWS):
        stop = min(start + MASK_ROWS, Q)
        rows = torch.arange(start, stop, device=q.device)
        add = bias[:, cols[None, :] - rows[:, None] + (Q - 1)].to(q.dtype)  # (H, r, K)
        ok = rule.allowed(np.arange(start, stop), np.arange(K))
        if ok is not None:
            add = add.masked_fill(~torch.as_tensor(ok, device=q.device), float("-inf"))
        mask = add.unsqueeze(0)
        if q.device.type == "cpu" and q.dtype in FLASH_DTYPES:
            flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
            o, row_lse = flash(q[:, :, start:stop], kk, vv, 0.0, False, attn_mask=mask, scale=scale)
        else:
            s = (q[:, :, start:stop].float() @ kk.float().transpose(-1, -2)) * scale + mask
            row_lse = torch.logsumexp(s, dim=-1)
            o = (torch.softmax(s, dim=-1) @ vv.float()).to(q.dtype)
        out[:, :, start:stop], lse[:, :, start:stop] = o, row_lse
    return out, lse


AttentionInterface.register(CAPTURE, capture_attention)
ALL_MASK_ATTENTION_FUNCTIONS.register(CAPTURE, sdpa_mask)
AttentionInterface.register(CAPTURE_HEADS, capture_heads)
ALL_MASK_ATTENTION_FUNCTIONS.register(CAPTURE_HEADS, sdpa_mask)
