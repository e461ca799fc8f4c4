"""`make gpu-check`: on a machine with CUDA, the tests that need it and the long-input bench at
Llama-3.2-1B's real widths on the GPU, printed as one table, within 8 minutes (docs/speed.md
keeps its last output). Without CUDA it says so and stops, successfully: nothing to check.

    .venv/bin/python -m bench.gpu_check [--limit-s 480]

The tests: every test that skips without CUDA (tests/model/net/test_device.py, the capture's
CUDA record against the CPU's). The bench: the real-width Llama (16 layers, 32 query / 8
key-value heads, hidden 2,048, MLP 8,192, random weights, vocabulary 4,096) built once, then at
2,048 and 8,192 tokens the sdpa forward pass and attnlens' trace on the GPU (record="auto"),
each timed on the wall clock with the device synchronised, and the peak GPU memory of each;
the trace's record lands on the CPU, as every record does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.long_inputs import LLAMA_REAL, VOCAB, build, text_of
from bench.targets import load_average

LIMIT_S = 480.0  # the whole check: 8 minutes
LENGTHS = (2048, 8192)
TESTS = ["tests/model/net/test_device.py", "tests/model/lenses/hf/test_capture.py", "-k", "cuda"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-s", type=float, default=LIMIT_S)
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("gpu-check: no CUDA device here (torch.cuda.is_available() is False): nothing run")
        return 0
    started = time.perf_counter()
    print(f"gpu-check on {torch.cuda.get_device_name(0)}; {load_average()}", flush=True)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *TESTS],
                           capture_output=True, text=True, check=False)  # fmt: skip
    summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else "no output"
    print(f"CUDA tests: {summary}", flush=True)
    rows: list[tuple[int, dict[str, float] | None, dict[str, float] | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(LLAMA_REAL, max(LENGTHS) + 64, Path(tmp) / "llama-real")
        for n in LENGTHS:
            if time.perf_counter() - started > args.limit_s:
                rows.append((n, None, None))
                continue
            rows.append((n, forward_on_gpu(folder, n), trace_on_gpu(folder, n)))
            torch.cuda.empty_cache()
            print(row_line(*rows[-1]), flush=True)
    elapsed = time.perf_counter() - started
    print(table(rows, summary, elapsed))
    return tests.returncode


def forward_on_gpu(folder: Path, n: int) -> dict[str, float]:
    """The sdpa forward pass on the GPU: wall seconds (synchronised) and peak memory."""
    import torch
    import transformers as T

    model = T.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa")
    model = model.to("cuda").eval()
    ids = torch.tensor([[(i * 7919) % (VOCAB - 2) + 2 for i in range(n)]], device="cuda")
    with torch.inference_mode():
        model(input_ids=ids)  # a warm-up: kernels chosen, memory pooled
        return _timed(lambda: model(input_ids=ids))


def trace_on_gpu(folder: Path, n: int) -> dict[str, float]:
    """attnlens' trace of the same input on the GPU, and the record it kept."""
    import torch

    from attnlens.model.lenses.hf.lens import HFLens
    from attnlens.record.scores import stack_nbytes

    lens = HFLens(folder, torch.device("cuda"))
    lens.trace(text_of(255), record="auto")  # a warm-up
    found: dict[str, Any] = {}
    out = _timed(lambda: found.setdefault("trace", lens.trace(text_of(n - 1), record="auto")))
    tr = found["trace"]
    out["stored"] = sum(stack_nbytes(v) for v in (tr.scores or {}).values()) / 2**20
    return out


def _timed(call: Any) -> dict[str, float]:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    return {"wall": time.perf_counter() - start, "peak": torch.cuda.max_memory_allocated() / 2**20}


def row_line(n: int, sdpa: dict[str, float] | None, ours: dict[str, float] | None) -> str:
    label = f"Llama-3.2-1B real widths × {n:,}"
    if sdpa is None or ours is None:
        return f"{label:<34} not run: past the time limit"
    return (
        f"{label:<34} {sdpa['wall']:>8.2f}s {ours['wall']:>8.2f}s "
        f"{ours['wall'] / sdpa['wall']:>6.2f}× {sdpa['peak']:>8.0f}MB {ours['peak']:>8.0f}MB "
        f"{ours['stored']:>7.0f}MB"
    )


def table(rows: list[tuple[int, Any, Any]], tests: str, elapsed: float) -> str:
    head = (f"{'case':<34} {'forward':>9} {'trace':>9} {'ratio':>7} {'fwd GPU':>10} "
            f"{'trace GPU':>10} {'record':>9}")  # fmt: skip
    lines = ["gpu-check: the sdpa forward and the trace on the GPU (wall, synchronised)", head]
    lines += [row_line(*row) for row in rows]
    lines += [
        f"CUDA tests: {tests}",
        f"{elapsed:.0f} s in all (limit {LIMIT_S:.0f}); {load_average()}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
