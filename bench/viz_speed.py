"""Figure speed: build time and JSON size of the model view and one head heatmap.

Synthetic traces (random attention, rows summing to 1) at L×H×T = 6×12×128 and 12×12×512.
Targets from issue 5: the model view ≤ 2 MB of JSON and ≤ 1 s to build at 12×12×512.
Build = the viz function; JSON = `fig.to_json()`; median of a few repeats.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np
import plotly.graph_objects as go

from attnlens import viz
from attnlens.record.trace import ModelInfo, Trace

SIZES = ((6, 12, 128), (12, 12, 512))
REPEATS = 3
MODEL_VIEW_LIMITS = (1.0, 2_000_000)  # seconds, bytes


def synthetic_trace(L: int, H: int, T: int, seed: int = 0) -> Trace:
    """An encoder-only record of random attention over T positions."""
    logits = np.random.default_rng(seed).standard_normal((L, H, T, T), dtype=np.float32)
    e = np.exp(logits)
    weights = e / e.sum(-1, keepdims=True)  # (L, H, T, T)
    tokens = tuple(f"t{i % 50}" for i in range(T))  # repeats on purpose
    return Trace(
        model=ModelInfo("synthetic", "encoder", L, H, 512),
        src_tokens=tokens,
        tgt_tokens=(),
        encoder_self=weights,
        decoder_self=None,
        cross=None,
        encoder_self_mask=np.ones((T, T), dtype=bool),
        decoder_self_mask=None,
        cross_mask=None,
        positional_encoding=None,
        tgt_logprobs=None,
    )


def measure(build: Callable[[], go.Figure]) -> tuple[float, float, int]:
    """Median build seconds, median to_json seconds, JSON size in bytes."""
    builds, dumps, size = [], [], 0
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fig = build()
        t1 = time.perf_counter()
        size = len(fig.to_json().encode())
        dumps.append(time.perf_counter() - t1)
        builds.append(t1 - t0)
    return statistics.median(builds), statistics.median(dumps), size


def rows() -> list[tuple[str, str, float, float, int, str]]:
    """One row per (size, figure): build s, JSON s, JSON bytes, and the verdict on targets."""
    out = []
    for L, H, T in SIZES:
        tr = synthetic_trace(L, H, T)
        shape = f"{L}×{H}×{T}"
        build, dump, size = measure(partial(viz.model_view, tr, "encoder_self", (0, 0)))
        ok = build <= MODEL_VIEW_LIMITS[0] and size <= MODEL_VIEW_LIMITS[1]
        out.append((shape, "model view", build, dump, size, "ok" if ok else "OVER"))
        build, dump, size = measure(partial(viz.head_heatmap, tr, "encoder_self", 0, 0))
        out.append((shape, "head heatmap", build, dump, size, "-"))
    return out


def main() -> None:
    print("figure speed: build and JSON of viz figures, synthetic traces, median of", REPEATS)
    print(f"{'L×H×T':<10} {'figure':<13} {'build s':>8} {'json s':>7} {'JSON MB':>8} {'target':>7}")
    for shape, name, build, dump, size, verdict in rows():
        print(f"{shape:<10} {name:<13} {build:>8.3f} {dump:>7.3f} {size / 1e6:>8.2f} {verdict:>7}")
    print("target: model view ≤ 1 s and ≤ 2 MB at 12×12×512")


if __name__ == "__main__":
    main()
