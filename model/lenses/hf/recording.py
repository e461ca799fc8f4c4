"""Which record a Hugging Face trace keeps, and the budget it is held to (docs/python.md).

`weights` keeps every head's T × T weights from eager attention, as attnlens always has;
`scores` keeps what the kernel computed them from (record/scores.py), which grows with T;
`auto` keeps the weights where they fit the record budget and the scores past it. The budget
counts what is stored: every head's weights are held to ATTNLENS_MAX_RECORD_MB, a record of
scores by default to a quarter of the memory available (model/budget.py). A model whose scores
the record cannot state is recorded from its eager weights, and its record says why; where
those do not fit either, the refusal says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from transformers import PretrainedConfig

from attnlens.model.budget import (
    RECORD_VAR,
    Limit,
    budget_bytes,
    check_budget,
    scores_limit,
    trace_bytes,
)
from attnlens.model.lenses import summaries
from attnlens.model.lenses.hf.capture import UnexpressibleError
from attnlens.model.lenses.lens import RecordMode
from attnlens.record.trace import ModelInfo, Trace

FLOAT = 4  # float32 bytes
LSE = 8  # a row's log-sum-exp: float64


@dataclass(frozen=True)
class Widths:
    """Per stack: key heads (grouped-query attention shares them) and the width of a head."""

    kv_heads: int
    d_head: int
    decoder_kv_heads: int
    decoder_d_head: int
    item: int = FLOAT  # bytes of one number of q and k, kept at the model's dtype

    @classmethod
    def of(cls, config: PretrainedConfig, info: ModelInfo, item: int = FLOAT) -> Widths:
        text = config.get_text_config()
        heads = info.n_heads
        kv = int(getattr(text, "num_key_value_heads", None) or heads)
        d = getattr(text, "head_dim", None) or getattr(text, "d_kv", None)
        d_head = int(d or info.d_model // heads)
        dec_heads = info.shape("decoder_self")[1]
        dec_kv = kv if dec_heads == heads else dec_heads
        return cls(kv, d_head, dec_kv, int(d or info.d_model // dec_heads), item)


def weights_bytes(info: ModelInfo, S: int, T: int) -> int:
    """Every head's weights: S² on the encoder's shape, T² + T·S on the decoder's."""
    L, H = info.shape("encoder_self")
    dL, dH = info.shape("decoder_self")
    return trace_bytes(L, H, S, 0) + trace_bytes(dL, dH, S, T) - trace_bytes(dL, dH, S, 0)


def scores_bytes(info: ModelInfo, widths: Widths, S: int, T: int) -> int:
    """Queries and keys (at the model's dtype) and each row's log-sum-exp (float64) of every
    layer, the values and heads' outputs the capture may hold beside them until the forward
    ends (hf/capture.py's HeldHeads, the norms' inputs, the size of the keys and queries again:
    held only where a call cannot take its layer's norms itself, as ALBERT's shared layers'
    cannot, but counted for every model, a bound), and the summaries: linear in S and T."""
    L, H = info.shape("encoder_self")
    dL, dH = info.shape("decoder_self")
    kv, d, dkv, dd = widths.kv_heads, widths.d_head, widths.decoder_kv_heads, widths.decoder_d_head
    encoder = L * _layer(widths.item, H * S * d, kv * S * d, H * S) if S else 0
    decoder = dL * _layer(widths.item, dH * T * dd, dkv * T * dd, dH * T) if T else 0
    cross = dL * _layer(widths.item, dH * T * dd, dkv * S * dd, dH * T) if S and T else 0
    pooled = _overview(L * H, S, S) + _overview(dL * dH, T, T) + _overview(dL * dH, T, S)
    return encoder + decoder + cross + pooled


def _layer(item: int, queries: int, keys: int, rows: int) -> int:
    """One layer's bytes: its queries and keys kept, its values (as many as the keys) and heads'
    outputs (as many as the queries) held, each at `item` bytes, and a log-sum-exp per row."""
    return 2 * item * (queries + keys) + LSE * rows


def _overview(heads: int, Q: int, K: int) -> int:
    """A kind's Summary: max, mean and the norms' mean blocks in float16, four statistics a
    head."""
    if not (Q and K):
        return 0
    blocks = summaries.OVERVIEW  # (tests patch it there: one place)
    return heads * (3 * 2 * min(Q, blocks) * min(K, blocks) + 4 * FLOAT)


def longest(fits: Callable[[int], bool], upto: int) -> int:
    """The longest n ≤ upto with fits(n) (sizes grow with n), 0 if none."""
    low, high = 0, upto
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def traced(
    run: Callable[[bool], Trace],
    mode: RecordMode,
    sized: Callable[[bool, int], int],
    n: int,
    limit: int,
) -> Trace:
    """run(scores) as `mode` asks, within the budget. sized(scores, n) is the record's bytes
    for an input of n tokens (n is this input's), limit the model's longest input. Every
    head's weights are held to ATTNLENS_MAX_RECORD_MB (512 MB by default: `auto` keeps them
    up to there), a record of scores to scores_limit (by default a quarter of the memory
    available: model/budget.py)."""
    weights, scores = Limit(budget_bytes(), RECORD_VAR), scores_limit()
    as_weights = mode == "weights" or (mode == "auto" and sized(False, n) <= weights.bytes)
    if not as_weights:
        check_budget(sized(True, n), "trace", _hint(sized, True, scores, limit), limit=scores)
        try:
            return run(True)
        except UnexpressibleError as why:
            reason = f"not as scores: {why}"
            hint = _hint(sized, False, weights, limit, scores_possible=False)
            check_budget(sized(False, n), "trace", f"{reason}; {hint}", limit=weights)
            tr = run(False)
            return replace(tr, warnings=(*tr.warnings, f"recorded as eager weights: {reason}"))
    check_budget(sized(False, n), "trace", _hint(sized, False, weights, limit), limit=weights)
    return run(False)


def _hint(
    sized: Callable[[bool, int], int],
    scores: bool,
    budget: Limit,
    limit: int,
    scores_possible: bool = True,
) -> str:
    """The longest input that fits this record, and the settings that let a longer one in."""
    most = longest(lambda m: sized(scores, m) <= budget.bytes, limit)
    where = "" if budget.source == RECORD_VAR else " on this machine now"
    other = ""
    if not scores and scores_possible:
        other = "; or record='scores' (--record scores), which grows with T only"
    return f"the longest input that fits{where} is {most} tokens; raise {RECORD_VAR}{other}"
