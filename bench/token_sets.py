"""A token set's attention in every head (analysis/token_sets.py, issue 36) on long records kept as
scores: a set of keys needs each query's weight on the set in every head, a set of queries the
set's rows; both are computed from the record a tile at a time. The reference, measured in the
same run, is one head's exact whole map (`Trace.head`): the brute force computes that for every
head, L × H times.

    .venv/bin/python -m bench.token_sets [--quick]

Models built as bench/long_inputs.py builds them (random weights, real layers, heads and key/value
heads, hidden size shrunk for the CPU); one torch thread; --quick: GPT-2 small × 1,024 only.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from bench.long_inputs import GPT2, LLAMA, Shape, build, text_of
from bench.targets import Target, load_average, table

CASES = ((GPT2, 1024), (LLAMA, 8192))
SETS = (
    ("keys", "16 keys spread over the text"),
    ("keys", "a range of 256 keys"),
    ("queries", "16 queries spread over the text"),
    ("queries", "a range of 256 queries"),
)


def positions(what: str, n: int) -> tuple[int, ...]:
    """The positions of one set of SETS in a text of n tokens."""
    if what.startswith("16"):
        return tuple(range(n // 32, n, n // 16))
    return tuple(range(n // 2, n // 2 + 256))


def measure(shape: Shape, n: int, folder: Path) -> list[tuple[str, float, float]]:
    """(set, seconds, one head's whole map in seconds) for each set, on one traced record."""
    import torch

    from attnlens.analysis.token_sets import set_attention
    from attnlens.model.lenses.hf.lens import HFLens

    torch.set_num_threads(1)
    tr = HFLens(folder, torch.device("cpu")).trace(text_of(n - 1), record="scores")
    kind = tr.kinds[0]
    out = []
    for i, (side, what) in enumerate(SETS):  # each beside a map of its own: the load moves
        t0 = time.perf_counter()
        tr.head(kind, 0, i)
        one_head = time.perf_counter() - t0
        t0 = time.perf_counter()
        set_attention(tr, kind, side, positions(what, n))  # type: ignore[arg-type]
        out.append((what, time.perf_counter() - t0, one_head))
    return out


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="GPT-2 small × 1,024 only")
    args = parser.parse_args(argv)
    print(f"token sets in every head; {load_average()}")
    lines = [f"{'shape × tokens: set':<72} {'every head':>11} {'one map':>9} {'maps':>6}"]
    targets = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, n in CASES[:1] if args.quick else CASES:
            folder = build(shape, n + 64, Path(tmp) / f"{shape.family}-{n}")
            heads = shape.layers * shape.heads
            for what, seconds, one_head in measure(shape, n, folder):
                label = f"{shape.name} × {n:,}: {what}"
                lines.append(f"{label:<72} {seconds:>10.2f}s {one_head:>8.2f}s "
                             f"{seconds / one_head:>6.1f}")  # fmt: skip
                # the brute force rebuilds all L × H maps (under a causal mask each map's
                # reachable half): a set costs a tenth of it at most, where it is a quarter of
                # the text (256 of 1,024) three quarters (it computes 0.375 of the weights)
                share = 0.75 if what.startswith("a range") and n <= 1024 else 0.1
                targets.append(Target(f"{shape.family} × {n:,}: {what} vs one head's map",
                                      seconds, share * heads, one_head))  # fmt: skip
    lines.append(f"peak RSS of this process {_peak_mb():.0f} MB; {load_average()}")
    print("\n".join(lines))
    print(table(targets))
    return targets


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
