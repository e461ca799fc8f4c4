"""The trace-to-forward table (issue 48): each long-input case's trace against the sdpa forward
pass of the same model, both with one torch thread and with two, each measurement in a process
of its own (bench/long_inputs.py's run), the load average beside every row.

Targets: trace CPU within 1.3 × the forward's at the shrunk GPT-2 shape × 1,024 and the shrunk
Llama shape × 8,192, 1.2 × at the real widths × 2,048 and × 8,192, at either thread count (the
other cases keep issue 35's); peak RSS within the forward's + 1.2 × the record; the peaks of
three runs of the memory case's trace at one thread within 5% of each other.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.long_inputs import LLAMA, Shape, build, run
from bench.targets import Target

THREADS = (1, 2)
CPU_LIMIT = {("GPT-2", 1024, False): 1.3, ("Llama", 8192, False): 1.3,
             ("Llama", 2048, True): 1.2, ("Llama", 8192, True): 1.2}  # fmt: skip
ISSUE_35_LIMIT = {1024: 1.3, 2048: 1.5, 4096: 2.0, 8192: 2.0}
MEMORY_CASE = (LLAMA, 8192)  # its trace runs once more: three peaks to compare
Row = tuple[Shape, int, int, dict[str, float], dict[str, float]]  # shape, n, threads, sdpa, ours


def run_cases(cases: tuple[tuple[Shape, int], ...], threads: tuple[int, ...]) -> list[Target]:
    """Every case at every thread count: the table printed, the targets returned."""
    rows: list[Row] = []
    targets: list[Target] = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, n in cases:
            folder = build(shape, n + 64, Path(tmp) / f"{shape.family}-{shape.hidden}-{n}")
            case = []
            for t in threads:
                sdpa, ours = run("sdpa", folder, n, t), run("trace", folder, n, t)
                case.append((shape, n, t, sdpa, ours))
                print(row_line(case[-1]), flush=True)
            peaks = [case[0][4].get("rss", 0.0)]  # one thread count's: the same work each time
            if (shape, n) == MEMORY_CASE:
                peaks += [run("trace", folder, n, threads[0]).get("rss", 0.0) for _ in range(2)]
            rows += case
            targets += case_targets(case, peaks)
            shutil.rmtree(folder)  # a real-width Llama takes 4 GB of disk
    print(table(rows))
    return targets


def cpu_limit(shape: Shape, n: int) -> float:
    family = "GPT-2" if shape.family == "gpt2" else "Llama" if shape.family == "llama" else ""
    return CPU_LIMIT.get((family, n, bool(shape.intermediate)), ISSUE_35_LIMIT[n])


def case_targets(case: list[Row], peaks: list[float]) -> list[Target]:
    """The targets of one case: CPU at each thread count, peak RSS and its spread, and (at
    one thread) the exact map, the tile and the NPZ export; peaks: the trace's at the first
    thread count, as many runs as were made."""
    shape, n = case[0][0], case[0][1]
    wide = ", real width" if shape.intermediate else ""
    name = f"{shape.family} × {n:,}{wide}"
    out: list[Target] = []
    for _, _, t, sdpa, ours in case:
        if "error" in sdpa or "error" in ours:
            out.append(Target(f"{name}, {t} thread(s): ran", 1.0, 0.0, unit="n"))
            continue
        out.append(Target(f"{name}, {t} thread(s): trace CPU vs sdpa forward", ours["cpu"],
                          cpu_limit(shape, n), sdpa["cpu"]))  # fmt: skip
    _, _, _, sdpa, ours = case[0]
    if "error" in sdpa or "error" in ours:
        return out
    bound = 1.5 if shape.family == "gpt2" else (sdpa["rss"] + 1.2 * ours["stored"]) / sdpa["rss"]
    out.append(Target(f"{name}: peak RSS vs sdpa's (MB)", ours["rss"], bound, sdpa["rss"], "n"))
    if len(peaks) > 1 and min(peaks) > 0:
        spread = (max(peaks) - min(peaks)) / min(peaks)
        out.append(Target(f"{name}: peak RSS spread over {len(peaks)} runs", spread, 0.05,
                          unit="n"))  # fmt: skip
    if n == 8192:
        out += [Target(f"{name}: one head's exact map", ours["head"], 1.0),
                Target(f"{name}: an exact 256 × 256 tile", ours["tile"], 0.05)]  # fmt: skip
    out.append(Target(f"{name}: NPZ export vs trace", ours["npz"], 0.5, ours["cpu"]))
    return out


HEADER = (f"{'shape × tokens':<46} {'thr':>3} {'forward':>8} {'trace':>8} {'ratio':>6} "
          f"{'target':>7} {'fwd RSS':>8} {'trace RSS':>9} {'record':>7} {'load':>5}")  # fmt: skip


def row_line(row: Row) -> str:
    shape, n, t, sdpa, ours = row
    real = " (real width)" if shape.intermediate else ""
    label = f"{shape.family} × {n:,}, hidden {shape.hidden}{real}"
    if "error" in sdpa or "error" in ours:
        return f"{label:<46} {t:>3} failed: {sdpa.get('why') or ours.get('why')}"
    return (
        f"{label:<46} {t:>3} {sdpa['cpu']:>7.1f}s {ours['cpu']:>7.1f}s "
        f"{ours['cpu'] / sdpa['cpu']:>5.2f}× {cpu_limit(shape, n):>6.1f}× {sdpa['rss']:>6.0f}MB "
        f"{ours['rss']:>7.0f}MB {ours['stored']:>5.0f}MB {ours['load']:>5.1f}"
    )


def table(rows: list[Row]) -> str:
    """The trace-to-forward table: CPU seconds of each, their ratio and its target, peak RSS
    of each and the record's size, the 1-minute load average as the trace ended."""
    lines = ["trace-to-forward, CPU seconds (each a process of its own, same run):", HEADER]
    return "\n".join(lines + [row_line(row) for row in rows])
