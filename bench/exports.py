"""Exports: how long a record takes to download, and how large it is, on minilm.

The record's own serialisers (record/trace.py), as the app's download buttons call them:
`to_json` (the attnlens.trace/1 JSON), `to_npz` (compressed arrays) at 512 tokens, and the
long-format CSV (`to_frame().to_csv`) at 128 tokens (at 512 it is 19 million rows). Reported,
not a target: the download runs only when its button is clicked.

    .venv/bin/python -m bench.exports
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import attnlens
from attnlens.record.trace import Trace
from bench.app_latency import WORDS


def timed(make: Callable[[], str | bytes]) -> tuple[float, int]:
    """Seconds to make the download, and its size in bytes."""
    start = time.perf_counter()
    data = make()
    seconds = time.perf_counter() - start
    return seconds, len(data.encode() if isinstance(data, str) else data)


def minilm_trace(tokens: int) -> Trace:
    rng = random.Random(tokens)
    lens = attnlens.load("minilm")
    return lens.trace(" ".join(rng.choice(WORDS) for _ in range(tokens - 2)))


def rows() -> list[tuple[str, int, float, int]]:
    """(format, tokens, seconds, bytes) of each export."""
    out = []
    long = minilm_trace(512)
    for name, make in (("JSON", long.to_json), ("npz", long.to_npz)):
        out.append((name, 512, *timed(make)))
    del long
    short = minilm_trace(128)
    out.append(("CSV", 128, *timed(lambda: short.to_frame().to_csv(index=False))))
    return out


def table(found: list[tuple[str, int, float, int]]) -> str:
    lines = ["exports of a minilm record (6 layers × 12 heads)", f"{'format':<7} {'tokens':>6} "
             f"{'seconds':>8} {'MB':>8}"]  # fmt: skip
    for name, tokens, seconds, size in found:
        lines.append(f"{name:<7} {tokens:>6} {seconds:>8.2f} {size / 1e6:>8.1f}")
    return "\n".join(lines)


def main() -> None:
    print(table(rows()))


if __name__ == "__main__":
    main()
