"""What recording the norms adds to a trace (issue 47): each case's trace with the norms and
without them (the capture handing back only its scores, no norms taken: the trace as it was
before), alternating in one process (with, without; then without, with: neither arm always
second), one thread and two, the load average beside every row. Target: with ≤ 1.05 × without,
at GPT-2 small's shape × 1,024 (at its own width, 768, heads of 64: the trace takes 3.5 s on one
thread here; and with the hidden size shrunk 4× as the other benches build it) and the
Llama-3.2-1B shape (hidden shrunk 4×, heads of 16) × 8,192.

What the norms add is per head and position (‖f_h(xⱼ)‖, each head's output's norm) and per
head, block of rows and key (the overviews), whatever the width; the trace they are added to
shrinks with it, its forward pass by the width squared. So a shrunk model shows them larger
than the model it stands for: docs/speed.md gives both.

One process per case and thread count, so that both arms meet the same machine: a 1 s trace
varies by ±15 % from run to run here, and arms in processes of their own, minutes apart, had
medians 1.11× apart with nothing changed. A short trace warms the process first.

    .venv/bin/python -m bench.norms_cost [--repeats 3] [--threads 1 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

from bench.long_inputs import GPT2, GPT2_REAL, LLAMA, Shape, build, text_of
from bench.targets import Target, load_average, table

# each case with how many pairs of traces one repeat makes: the short traces are cheap, and
# their noise is as large
CASES: tuple[tuple[Shape, int, int], ...] = (
    (GPT2_REAL, 1024, 3),
    (GPT2, 1024, 6),
    (LLAMA, 8192, 1),
)
LIMIT = 1.05
WARM = 64  # tokens of the trace that warms a process


def measure(folder: str, n: int, threads: int, pairs: int) -> dict[str, list[float]]:
    """pairs × both arms in this process, CPU seconds each, and the share of the norms' own
    steps: each attention call's (hf/norms.py's InCall) and the trace's after the pass."""
    import torch

    from attnlens.model.lenses.hf import norms, tracing
    from attnlens.model.lenses.hf.capture import CAPTURE
    from attnlens.model.lenses.hf.heads import HeadsError
    from attnlens.model.lenses.hf.lens import HFLens

    torch.set_num_threads(threads)
    lens = HFLens(Path(folder), torch.device("cpu"))
    spent = [0.0]  # CPU seconds of the norms' own steps (with): a share the noise cannot hide

    def timed(step: Any) -> Any:
        def run(*args: Any) -> Any:
            started = time.process_time()
            out = step(*args)
            spent[0] += time.process_time() - started
            return out

        return run

    def no_call(*args: Any) -> Any:
        raise HeadsError("the trace as before the norms")

    arms: dict[str, list[Any]] = {
        "with": [
            mock.patch.object(tracing, "norms", timed(tracing.norms)),
            mock.patch.object(norms.InCall, "__call__", timed(norms.InCall.__call__)),
        ],
        "without": [  # the trace as before the norms: the capture's scores, nothing else
            mock.patch.object(tracing, "CAPTURE_HEADS", CAPTURE),
            mock.patch.object(tracing, "InCall", no_call),
            mock.patch.object(tracing, "norms", lambda *a: (None, None)),
        ],
    }
    lens.trace(text_of(WARM - 1), record="scores")
    out: dict[str, list[float]] = {"with": [], "without": [], "norms": []}
    for i in range(pairs):
        for arm in ("with", "without") if i % 2 == 0 else ("without", "with"):
            for patch in arms[arm]:
                patch.start()
            spent[0] = 0.0
            started = time.process_time()
            tr = lens.trace(text_of(n - 1), record="scores")
            out[arm].append(time.process_time() - started)
            mock.patch.stopall()
            assert (tr.norms is not None) == (arm == "with"), tr.norms_missing
            out["norms"] += [spent[0] / out[arm][-1]] if arm == "with" else []
            del tr
    return out


def run(folder: Path, n: int, threads: int, pairs: int) -> dict[str, list[float]]:
    command = [sys.executable, "-m", "bench.norms_cost", "--measure", str(folder), str(n),
               str(threads), str(pairs)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run_cases(repeats: int, threads: tuple[int, ...]) -> list[Target]:
    """Every case at each thread count: repeats × its pairs traces of each arm, in one
    process. The target compares each arm's fastest trace: the work is the same every time, and
    what this shared machine adds to it (a trace's CPU time varies by ±15 %, for minutes at a
    time) only ever adds; the medians and the median ratio of traces made side by side are
    printed beside it."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, n, pairs in CASES:
            folder = build(shape, n + 64, Path(tmp) / f"{shape.family}-{shape.hidden}-{n}")
            for t in threads:
                got = run(folder, n, t, repeats * pairs)
                with_, without = (statistics.median(got[a]) for a in ("with", "without"))
                fastest, fastest_without = min(got["with"]), min(got["without"])
                side = statistics.median(
                    a / b for a, b in zip(got["with"], got["without"], strict=True)
                )
                print(f"{shape.name} × {n:,}, {t} thread(s), {len(got['with'])} traces of "
                      f"each: fastest with norms {fastest:.3f} s CPU, without "
                      f"{fastest_without:.3f} s ({fastest / fastest_without:.3f}×); medians "
                      f"{with_:.3f} s and {without:.3f} s ({with_ / without:.3f}×); side by side "
                      f"{side:.3f}×; the norms' own steps {statistics.median(got['norms']):.1%} "
                      f"of the trace (load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
                width = f"{shape.hidden} wide" if shape is not GPT2_REAL else "its own width"
                out.append(Target(f"{shape.family} ({width}) × {n:,}, {t} thread(s): with norms "
                                  "vs without", fastest, LIMIT, fastest_without))  # fmt: skip
            shutil.rmtree(folder)
    return out


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        folder, n, threads, pairs = args.measure
        print(json.dumps(measure(folder, int(n), int(threads), int(pairs))))
        return []
    print(f"norms' cost, hidden and vocabulary shrunk; {load_average()}", flush=True)
    return run_cases(args.repeats, tuple(args.threads))


if __name__ == "__main__":
    found = main()
    if found:
        print(table(found))
