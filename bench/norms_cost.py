"""What recording the norms adds to a trace (issue 47): each case's trace with the norms and
without them (the capture handing back only its scores, no norms taken: the trace as it was
before), each in a process of its own, at one torch thread and at two, alternating, the load
average beside every row. Target: with ≤ 1.05 × without, at the shrunk GPT-2 shape × 1,024 and
the Llama-3.2-1B shape (hidden shrunk) × 8,192.

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

from bench.long_inputs import GPT2, LLAMA, Shape, build, text_of
from bench.targets import Target, load_average, table

CASES: tuple[tuple[Shape, int], ...] = ((GPT2, 1024), (LLAMA, 8192))
LIMIT = 1.05


def measure(arm: str, folder: str, n: int, threads: int) -> dict[str, float]:
    """One trace in this process, CPU seconds: `with` the norms, or `without` (patched out)."""
    import torch

    from attnlens.model.lenses.hf import tracing
    from attnlens.model.lenses.hf.capture import CAPTURE
    from attnlens.model.lenses.hf.lens import HFLens

    torch.set_num_threads(threads)
    lens = HFLens(Path(folder), torch.device("cpu"))
    spent = [0.0]  # CPU seconds of the norms' own step (with): a share the noise cannot hide
    taken = tracing.norms

    def timed(*args: Any) -> Any:
        started = time.process_time()
        out = taken(*args)
        spent[0] += time.process_time() - started
        return out

    if arm == "without":  # the trace as before the norms: the capture's scores, nothing else
        mock.patch.object(tracing, "CAPTURE_HEADS", CAPTURE).start()
    step = timed if arm == "with" else (lambda *a: (None, None))
    mock.patch.object(tracing, "norms", step).start()
    started = time.process_time()
    tr = lens.trace(text_of(n - 1), record="scores")
    cpu = time.process_time() - started
    assert (tr.norms is not None) == (arm == "with"), tr.norms_missing
    return {"cpu": cpu, "norms": spent[0]}


def run(arm: str, folder: Path, n: int, threads: int) -> dict[str, float]:
    command = [sys.executable, "-m", "bench.norms_cost", "--measure", arm, str(folder), str(n),
               str(threads)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run_cases(repeats: int, threads: tuple[int, ...]) -> list[Target]:
    """Every case, both arms alternating `repeats` times at each thread count: medians."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, n in CASES:
            folder = build(shape, n + 64, Path(tmp) / f"{shape.family}-{n}")
            for t in threads:
                times: dict[str, list[float]] = {"with": [], "without": []}
                shares = []
                for _ in range(repeats):
                    for arm in times:
                        got = run(arm, folder, n, t)
                        times[arm].append(got["cpu"])
                        shares += [got["norms"] / got["cpu"]] if arm == "with" else []
                with_, without = (statistics.median(times[a]) for a in ("with", "without"))
                print(f"{shape.name} × {n:,}, {t} thread(s): with norms {with_:.2f} s CPU, "
                      f"without {without:.2f} s ({with_ / without:.3f}×); the norms' own step "
                      f"{statistics.median(shares):.1%} of the trace (load "
                      f"{os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
                out.append(Target(f"{shape.family} × {n:,}, {t} thread(s): trace with norms vs "
                                  "without", with_, LIMIT, without))  # fmt: skip
            shutil.rmtree(folder)
    return out


def main(argv: list[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        arm, folder, n, threads = args.measure
        print(json.dumps(measure(arm, folder, int(n), int(threads))))
        return []
    print(f"norms' cost, hidden and vocabulary shrunk; {load_average()}", flush=True)
    return run_cases(args.repeats, tuple(args.threads))


if __name__ == "__main__":
    found = main()
    if found:
        print(table(found))
