"""The head experiments' speed (issue 40): importance on `translate` and `minilm` at n = 100,
the ablated heads side by side (the lens' run_ablations and task_scores_many, beam search over
every example at once) against the path before them measured in the same run (one set of heads
per forward pass, each beam search alone: `measure_importance(batched=False)`), and the other
experiments' CPU time beside them. One torch thread; CPU time is this process's own, wall time
what it took on this machine at the load printed.

    .venv/bin/python -m bench.experiments_speed [--n 100] [--reference-n N]

--reference-n measures the reference at fewer inputs and scales its times to n (said in the
table); by default it runs at n too. Both results are compared: the table says how far apart
their numbers are (≤ 1e-6 expected).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attnlens.analysis.experiments.alignment import measure_alignment
from attnlens.analysis.experiments.catalog import explanation
from attnlens.analysis.experiments.importance import measure_importance
from attnlens.analysis.experiments.induction import measure_induction
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.registry import load
from attnlens.record.experiment import ExperimentResult
from bench.targets import Target, load_average, table

TARGETS = {"translate": 30.0, "minilm": 120.0}  # importance at n = 100, seconds of CPU


@dataclass(frozen=True)
class Timed:
    """One experiment run: its result and what it cost."""

    result: ExperimentResult
    cpu: float
    wall: float


def timed(run: Callable[[], ExperimentResult]) -> Timed:
    cpu, wall = time.process_time(), time.perf_counter()
    result = run()
    return Timed(result, time.process_time() - cpu, time.perf_counter() - wall)


def largest_difference(a: ExperimentResult, b: ExperimentResult) -> float:
    """The largest gap between the two results' numbers (heads and every further table)."""
    frames = [(a.heads, b.heads), *((a.tables[k], b.tables[k]) for k in a.tables)]
    gaps = [0.0]
    for x, y in frames:
        numbers = x.select_dtypes("number").columns
        if len(x) and len(numbers):
            diff = np.abs(x[numbers].to_numpy(float) - y[numbers].to_numpy(float))
            gaps.append(float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0)
    return max(gaps)


def importance_rows(name: str, n: int, reference_n: int) -> tuple[list[dict[str, object]], Target]:
    """Importance on one model: batched at n, the reference at reference_n (scaled to n)."""
    lens = load(name, device="cpu")
    ours = timed(lambda: measure_importance(lens, n, 0))
    ref = timed(lambda: measure_importance(lens, reference_n, 0, batched=False))
    scale = n / reference_n
    gap = largest_difference(ours.result, ref.result) if reference_n == n else float("nan")
    rows = [
        {"experiment": f"importance {name}", "path": "side by side", "n": n,
         "cpu_s": ours.cpu, "wall_s": ours.wall, "largest_difference": gap},
        {"experiment": f"importance {name}", "path": "one at a time (reference)"
         + (f", n = {reference_n} × {scale:g}" if scale != 1 else ""), "n": n,
         "cpu_s": ref.cpu * scale, "wall_s": ref.wall * scale, "largest_difference": gap},
    ]  # fmt: skip
    target = Target(f"importance {name} n={n}: CPU ≤ {TARGETS[name]:g} s", ours.cpu,
                    TARGETS[name])  # fmt: skip
    return rows, target


def alignment(lens: Lens, n: int, batched: bool) -> ExperimentResult:
    """The alignment experiment with the single-head importance it sets beside (no cache)."""
    importance = measure_importance(lens, n, 0, pruning=False, batched=batched)
    return measure_alignment(lens, importance, n, 0)


def other_rows(n: int) -> list[dict[str, object]]:
    """The other experiments' CPU time at their default n: induction and explanation (code
    unchanged by the batching but for induction's ablations), alignment with its single-head
    importance (pruning off) side by side and one at a time."""
    induction, translate = load("induction", device="cpu"), load("translate", device="cpu")
    rows = []
    for label, run in (
        ("induction induction", lambda: measure_induction(induction, 100, 0)),
        ("explanation induction", lambda: explanation(induction, 50, 0)),
        ("explanation translate", lambda: explanation(translate, 50, 0)),
    ):
        t = timed(run)
        row = {"experiment": label, "path": "as run", "n": t.result.params["n"]}
        rows.append(row | {"cpu_s": t.cpu, "wall_s": t.wall, "largest_difference": float("nan")})
    for batched in (True, False):
        t = timed(functools.partial(alignment, translate, n, batched))
        path = "side by side" if batched else "one at a time (reference)"
        rows.append({"experiment": "alignment translate (with its importance)", "path": path,
                     "n": n, "cpu_s": t.cpu, "wall_s": t.wall,
                     "largest_difference": float("nan")})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--reference-n", type=int, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows, targets = [], []
    for name in TARGETS:
        found, target = importance_rows(name, args.n, args.reference_n or args.n)
        rows += found
        targets.append(target)
    rows += other_rows(args.n)
    frame = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"(one torch thread; {load_average()})")
    print(table(targets))
    return targets


if __name__ == "__main__":
    main()
