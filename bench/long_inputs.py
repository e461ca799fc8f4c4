"""Every head at long inputs (issues 35 and 48): attnlens' trace against the plain sdpa forward
pass of the same Hugging Face model, in the same run, each in a process of its own (its peak
RSS), with one torch thread and with two: the trace-to-forward table.

    .venv/bin/python -m bench.long_inputs [--quick] [--real-width with|only|without]

The models are built here with random weights and a local tokenizer (one token a word): the
real layers, heads, key/value heads, positions and windows, the hidden size and vocabulary
shrunk for the CPU (printed with each shape), and at the real widths (the vocabulary still
shrunk). Both processes import the same libraries (transformers, attnlens), so the peak RSS
compared is what the forward pass and the trace add to them. The load average is printed with
every row: on a shared machine compare the ratios, measured back to back.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.targets import Target, load_average, table
from tests.helpers.long_gpt2 import save_word_tokenizer

VOCAB = 4096  # shrunk: the embeddings are not what is measured


@dataclass(frozen=True)
class Shape:
    name: str
    family: str  # gpt2, llama or mistral
    layers: int
    heads: int
    kv_heads: int
    hidden: int  # shrunk from the real model's
    real_hidden: int
    window: int | None = None
    intermediate: int | None = None  # the MLP's width; None: twice the hidden size (shrunk)

    def real(self, intermediate: int) -> Shape:
        """The same shape at the real model's hidden and MLP widths (the vocabulary stays
        shrunk: both runs pay the same output layer, and it is not what is measured)."""
        return replace(self, name=f"{self.name}, real width", hidden=self.real_hidden,
                       intermediate=intermediate)  # fmt: skip

    def config(self, positions: int) -> Any:
        import transformers as T

        if self.family == "gpt2":
            return T.GPT2Config(vocab_size=VOCAB, n_positions=positions, n_embd=self.hidden,
                                n_layer=self.layers, n_head=self.heads, bos_token_id=0,
                                eos_token_id=1, n_inner=self.intermediate)  # fmt: skip
        wide = self.intermediate or 2 * self.hidden
        common = dict(vocab_size=VOCAB, hidden_size=self.hidden, intermediate_size=wide,
                      num_hidden_layers=self.layers, num_attention_heads=self.heads,
                      num_key_value_heads=self.kv_heads, max_position_embeddings=positions,
                      bos_token_id=0, eos_token_id=1)  # fmt: skip
        if self.family == "mistral":
            return T.MistralConfig(**common, sliding_window=self.window)
        return T.LlamaConfig(**common)


GPT2 = Shape("GPT-2 small (12×12)", "gpt2", 12, 12, 12, 192, 768)
LLAMA = Shape("Llama-3.2-1B (16 layers, 32 q / 8 kv heads)", "llama", 16, 32, 8, 512, 2048)
MISTRAL = Shape("Mistral-like, window 1,024 (8×32, 8 kv)", "mistral", 8, 32, 8, 512, 4096, 1024)
# the real widths: GPT-2 small's MLP 3,072; Llama-3.2-1B's 8,192 (its head_dim 2,048 / 32 = 64)
GPT2_REAL, LLAMA_REAL = GPT2.real(3072), LLAMA.real(8192)


def build(shape: Shape, positions: int, folder: Path) -> Path:
    """The model with random weights and a word-level tokenizer, saved as a folder."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    model_class = T.GPT2LMHeadModel if shape.family == "gpt2" else T.AutoModelForCausalLM
    config = shape.config(positions)
    model = model_class(config) if shape.family == "gpt2" else model_class.from_config(config)
    model.eval().save_pretrained(folder)
    save_word_tokenizer(folder, VOCAB)
    return folder


def text_of(n: int) -> str:
    """n words, so n tokens (a decoder's start token is not added by this tokenizer)."""
    return " ".join(f"w{(i * 7919) % (VOCAB - 2)}" for i in range(n))


def measure(kind: str, folder: str, n: int, threads: int = 1) -> dict[str, float]:
    """One measurement in this process: the sdpa forward, or attnlens' trace."""
    import torch

    torch.set_num_threads(threads)
    if kind == "sdpa":
        import transformers as T

        import attnlens.model.lenses.hf.lens  # noqa: F401  the same libraries as the trace's

        model = T.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa").eval()
        ids = torch.tensor([[(i * 7919) % (VOCAB - 2) + 2 for i in range(n)]])
        started = time.process_time()
        with torch.inference_mode():
            model(input_ids=ids)
        return {"cpu": time.process_time() - started, "rss": _peak_mb()}
    return _trace(folder, n)


def _trace(folder: str, n: int) -> dict[str, float]:
    from attnlens.model.lenses.hf.lens import HFLens
    from attnlens.record.scores import stack_nbytes

    lens = HFLens(Path(folder), __import__("torch").device("cpu"))
    started = time.process_time()
    tr = lens.trace(text_of(n - 1), record="auto")  # the start token makes n
    cpu, rss = time.process_time() - started, _peak_mb()  # the peak of the trace itself
    stored = sum(stack_nbytes(v) for v in (tr.scores or {}).values())
    out: dict[str, float] = {"cpu": cpu, "rss": rss, "stored": stored / 2**20}
    out["scores"] = float(tr.scores is not None)
    kind = tr.kinds[0]
    t0 = time.perf_counter()
    tr.head(kind, 0, 0)
    out["head"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr.head(kind, 0, 0, slice(n // 2, n // 2 + 256), slice(n // 2 - 256, n // 2))
    out["tile"] = time.perf_counter() - t0
    with tempfile.TemporaryFile() as handle:  # a file, as the CLI writes it: not held in memory
        t0 = time.process_time()
        tr.write_npz(handle)
        out["npz"], out["npz_mb"] = time.process_time() - t0, handle.tell() / 2**20
    return out


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(kind: str, folder: Path, n: int, threads: int = 1) -> dict[str, float]:
    """measure() in a fresh process, so its peak RSS is its own; the load average as it ends."""
    command = [sys.executable, "-m", "bench.long_inputs", "--measure", kind, str(folder), str(n),
               str(threads)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        return {"error": 1.0, "why": done.stderr.strip().splitlines()[-1]}  # type: ignore[dict-item]
    return dict(json.loads(done.stdout.strip().splitlines()[-1])) | {"load": os.getloadavg()[0]}


CASES = ((GPT2, 1024), (LLAMA, 2048), (LLAMA, 8192), (MISTRAL, 4096))
# The shrunk width makes attention most of the forward pass, so the trace's summaries (every
# head's weights rebuilt once: about one attention's cost) weigh more than in the real model;
# these cases measure the same lengths at the real widths (Llama's: 4 GB of weights a process)
REAL_CASES = ((GPT2_REAL, 1024), (LLAMA_REAL, 2048), (LLAMA_REAL, 8192))


def main(argv: list[str] | None = None) -> list[Target]:
    from bench import trace_cost

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the shorter cases only")
    parser.add_argument(
        "--real-width", choices=("with", "only", "without"), default="with",
        help="also (with), or only, the cases at the real models' hidden and MLP widths",
    )  # fmt: skip
    parser.add_argument("--threads", type=int, nargs="+", default=list(trace_cost.THREADS))
    parser.add_argument(
        "--measure", nargs=4, metavar=("KIND", "FOLDER", "N", "THREADS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.measure:
        kind, folder, n, threads = args.measure
        print(json.dumps(measure(kind, folder, int(n), int(threads))))
        return []
    cases = {"with": CASES + REAL_CASES, "only": REAL_CASES, "without": CASES}[args.real_width]
    if args.quick:
        cases = tuple(c for c in cases if c[0] is not LLAMA or c[1] < 8192)[:2]
    print(
        f"vocabulary shrunk for the CPU ({VOCAB} words), hidden size too but where a row says "
        f"real width; {load_average()}",
        flush=True,
    )
    return trace_cost.run_cases(cases, tuple(args.threads))


if __name__ == "__main__":
    found = main()
    if found:
        print(table(found))
