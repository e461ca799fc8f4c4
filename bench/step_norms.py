"""What recording each step's norms adds to a decoding run (issue 47, Decode's step rows): the same
search with the steppers taking the norms (carried=True, as Decode records them) and without,
alternating in one process, on the bundled lm and translate and on the Llama-3.2-1B shape (hidden
shrunk, random weights, a 1,024-token prompt), greedy and beam search; CPU seconds per step, the
ratio with / without, and the load average.

    .venv/bin/python -m bench.step_norms [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from bench.targets import load_average

Search = Callable[[bool], int]  # carried → steps searched


def own_case(name: str, strategy: Any) -> Search:
    from attnlens.model.decoding.loop import search
    from attnlens.model.decoding.net_steppers import CausalStepper, TransformerStepper
    from attnlens.model.decoding.request import DecodeSettings
    from attnlens.model.lenses.registry import load

    lens: Any = load(name, "cpu")
    settings = DecodeSettings(strategy, 24, beam_size=4)
    if "cross" in lens.info.kinds:
        src, prefix = lens.source_ids(lens.example)[0], [lens.tokenizer.bos_id]
        make: Any = lambda c: TransformerStepper(lens.net, carried=c)  # noqa: E731
    else:
        src, prefix = None, lens.prompt(lens.example)[0]
        make = lambda c: CausalStepper(lens.net, carried=c)  # noqa: E731
    return lambda c: len(search(make(c), settings, src, prefix, lens.vocabulary())[0])


def llama_case(strategy: Any, folder: Path, prompt: int) -> Search:
    from attnlens.model.decoding.loop import Vocabulary, search
    from attnlens.model.decoding.request import DecodeSettings
    from attnlens.model.lenses.hf.lens import HFLens
    from attnlens.model.lenses.hf.stepper import HFStepper
    from bench.long_inputs import LLAMA, build, text_of

    build(LLAMA, 2048, folder)
    lens: Any = HFLens(folder, torch.device("cpu"), name="llama-shape")
    _, prefix, _ = lens._decode_inputs(text_of(prompt))
    vocab = Vocabulary(lens.names, lens.ends[0], lens._detokenize, (), (), ())  # no end: all steps
    settings = DecodeSettings(strategy, 16, beam_size=4)
    make = lambda c: HFStepper(lens.model, "decoder", lens.projections, carried=c)  # noqa: E731
    return lambda c: len(search(make(c), settings, None, prefix, vocab)[0])


def timed(run: Search, carried: bool) -> float:
    """CPU seconds a step, one search."""
    start = time.process_time()
    steps = run(carried)
    return (time.process_time() - start) / steps


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    folder = Path(tempfile.mkdtemp(prefix="attnlens-bench-"))
    cases = {f"{name} {s}": own_case(name, s) for name in ("lm", "translate")
             for s in ("greedy", "beam")}  # fmt: skip
    cases |= {f"Llama-3.2-1B shape × 1,024 {s}": llama_case(s, folder / s, 1024)
              for s in ("greedy", "beam")}  # fmt: skip
    print(f"{'case':<34} {'without ms/step':>16} {'with ms/step':>13} {'ratio':>6}")
    for name, run in cases.items():
        run(True)  # warm
        pairs = [(timed(run, False), timed(run, True)) for _ in range(args.repeats)]
        without = statistics.median(p[0] for p in pairs)
        with_ = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[1] / p[0] for p in pairs)
        print(f"{name:<34} {without * 1e3:16.2f} {with_ * 1e3:13.2f} {ratio:6.3f}")
    print(f"1 torch thread, median of {args.repeats} alternating pairs; {load_average()}")


if __name__ == "__main__":
    main()
