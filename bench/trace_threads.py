"""How many torch threads a trace made in the server should take (issue 48): one session alone,
and two at once, each as the server runs it (a thread per session, the trace through
app/server/trace_threads.py), on Llama-3.2-1B's shape (hidden 512) at TOKENS tokens.

    .venv/bin/python -m bench.trace_threads [--tokens 4096]

Policies: "one" (every trace on one thread, as the server ran them before), "cores" (each
trace on every core) and "share" (the cores shared among the traces running when one starts:
what the server does). Wall seconds until every trace is done, and the process's CPU seconds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from bench.long_inputs import LLAMA, build, text_of
from bench.targets import load_average
from bench.threads import seconds_all_done

TOKENS = 4096
POLICIES = ("one", "cores", "share")


def traced(folder: Path, policy: str, sessions: int, tokens: int) -> tuple[float, float]:
    """(wall, CPU) seconds of `sessions` traces of different texts started together."""
    import torch

    from attnlens.app.server.trace_threads import TraceThreads
    from attnlens.model.lenses.hf.lens import HFLens

    lens = HFLens(folder, torch.device("cpu"))
    cores = os.cpu_count() or 1
    fixed = {"one": 1, "cores": cores}.get(policy)
    share = TraceThreads(cores, 1)

    def one(i: int) -> None:
        if fixed is not None:
            torch.set_num_threads(fixed)
            lens.trace(text_of(tokens - 1 + i)[i * 6 :], record="auto")
            return
        with share.running():
            lens.trace(text_of(tokens - 1 + i)[i * 6 :], record="auto")

    cpu = time.process_time()
    wall = seconds_all_done([threading.Thread(target=one, args=(i,)) for i in range(sessions)])
    return wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=TOKENS)
    args = parser.parse_args(argv)
    print(f"{LLAMA.name} × {args.tokens:,} (hidden {LLAMA.hidden}); {load_average()}")
    print(f"{'policy':<8} {'sessions':>8} {'wall':>8} {'CPU':>8}  load")
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(LLAMA, args.tokens + 64, Path(tmp) / "llama")
        for sessions in (1, 2):
            for policy in POLICIES:
                if sessions == 1 and policy == "share":
                    continue  # alone, sharing is every core
                wall, cpu = traced(folder, policy, sessions, args.tokens)
                print(f"{policy:<8} {sessions:>8} {wall:>7.1f}s {cpu:>7.1f}s  "
                      f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
