"""What modern attention does that a map of weights alone does not say, read from the record:
query heads sharing one key head (grouped-query attention), a layer's sliding window, a head
that parks its weight on the first token (an attention sink), and the position scheme.

Nothing here is guessed from the weights' look: the grouping is the width of the keys the
kernel read (record/scores.py) or the key/value heads the record's model states; the window is
the layer's mask rule (or, for a record of weights, the mask it applied, checked to be exactly
a window); the sink the record's first-token share (its summaries, or the weights' own column
0); the scheme what the record states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlens.record.scores import MaskRule
from attnlens.record.trace import Kind, Trace

Span = tuple[int, int]  # positions start..stop-1
SINK_SHARE = 0.3  # a head whose queries give key 0 this much on average is marked a sink
SCHEME_NAMES = {
    "rotary": "rotary positions (RoPE)",
    "alibi": "ALiBi distance penalty",
    "learned": "learned absolute positions",
    "sinusoidal": "sinusoidal positions",
    "relative": "relative-position bias",
    "none": "no position information",
}


@dataclass(frozen=True)
class HeadMarks:
    """One head's marks: window W (keys j with query position − j < W; None: none), the
    query's key position offset, whether the mask is causal, the mean weight on key 0 and
    whether it makes the head a sink, and the position scheme's name (None: not recorded)."""

    window: int | None
    offset: int
    causal: bool
    first_share: float | None
    scheme: str | None

    @property
    def sink(self) -> bool:
        return self.first_share is not None and self.first_share >= SINK_SHARE

    def caption(self) -> str:
        """The marks in words ('' when there is nothing to say)."""
        parts = []
        if self.window is not None:
            parts.append(
                f"sliding window of {self.window:,} keys (the band between the dashed lines)"
            )
        if self.sink and self.first_share is not None:
            parts.append(f"attention sink: key 0 takes {self.first_share:.0%} on average (marked)")
        if self.scheme is not None:
            parts.append(self.scheme)
        return " · ".join(parts)

    def lines(self, rows: Span, cols: Span) -> list[list[float]]:
        """The window's edges inside queries rows × keys cols, each [key, query, key, query]
        of its two ends at cell centres (positions): the band's far edge, keys j = i + offset
        − W + 1, and its near edge, the diagonal j = i + offset (the causal edge)."""
        if self.window is None:
            return []
        shifts = (self.offset - self.window + 1, self.offset)
        return [seg for shift in shifts if (seg := segment(rows, cols, shift)) is not None]

    def data(self, rows: Span, cols: Span) -> dict[str, Any]:
        """JSON-ready marks of the window rows × cols for the browser (head_zoom.js)."""
        return {
            "band": self.lines(rows, cols),
            "window": self.window,
            "sink": self.sink and cols[0] == 0,  # key 0 in view: its column is outlined
            "marks_caption": self.caption(),
        }


def segment(rows: Span, cols: Span, shift: int) -> list[float] | None:
    """The line of keys j = i + shift for queries i of rows (stop excluded) within cols, as
    [j0, i0, j1, i1]; None where it misses the window."""
    first = max(rows[0], cols[0] - shift)
    last = min(rows[1] - 1, cols[1] - 1 - shift)
    if first > last:
        return None
    return [float(first + shift), float(first), float(last + shift), float(last)]


def head_marks(trace: Trace, kind: Kind, layer: int, head: int) -> HeadMarks:
    """The marks of (kind, layer, head), from what the record holds."""
    rule = mask_rule(trace, kind, layer)
    return HeadMarks(
        window=rule.window,
        offset=rule.offset,
        causal=rule.causal,
        first_share=first_share(trace, kind, layer, head),
        scheme=scheme_name(trace),
    )


def scheme_name(trace: Trace) -> str | None:
    """The position scheme the record states, in a few words; None where it states none."""
    scheme = trace.positional_scheme
    return None if scheme is None else SCHEME_NAMES.get(scheme, scheme)


def mask_rule(trace: Trace, kind: Kind, layer: int) -> MaskRule:
    """The layer's mask as a rule: the record's own where it keeps scores; else the rule the
    applied mask follows exactly (a window only where the mask is one), no mask: none."""
    if trace.scores and kind in trace.scores and getattr(trace, kind) is None:
        return trace.scores[kind][layer].mask
    mask = trace.mask(kind, layer)
    if mask is None:
        return MaskRule()
    Q, K = mask.shape
    widest = int(mask.sum(axis=1).max()) if Q else 0
    window = widest if 0 < widest < K else None
    try:
        return MaskRule.of(np.asarray(mask, dtype=bool), window)
    except ValueError:  # a mask of another shape (padding, a pair's segments): no band drawn
        return MaskRule(offset=K - Q)


def first_share(trace: Trace, kind: Kind, layer: int, head: int) -> float | None:
    """The mean over queries of the weight on key 0: the record's summary where it has one,
    else from the weights' column 0 (exact, one column of the head)."""
    summary = (trace.summaries or {}).get(kind)
    if summary is not None:
        return float(summary.first[layer, head])
    column = trace.head(kind, layer, head, cols=slice(0, 1))
    return float(column.mean()) if column.size else None


def kv_group(trace: Trace, kind: Kind) -> int | None:
    """How many query heads share each key head: where the record keeps the keys at the
    kernel's width (grouped-query attention), their width, if every layer shares the same way;
    else what the record's model says of its self-attention (ModelInfo.kv_heads). None where
    each query head has its own keys, or the record does not say."""
    layers = (trace.scores or {}).get(kind)
    if layers:
        widths = {(lay.n_heads, int(lay.k.shape[0])) for lay in layers}
        if len(widths) != 1:
            return None
        ((heads, kv_heads),) = widths
    else:
        kv = trace.model.kv_heads
        if kv is None or kind != trace.model.self_kind:
            return None
        heads, kv_heads = trace.model.shape(kind)[1], kv
    return heads // kv_heads if 0 < kv_heads < heads and heads % kv_heads == 0 else None
