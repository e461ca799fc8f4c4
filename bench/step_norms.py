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
    """A bundled model's network, read from its folder as the lens reads it, and its own
    example: the encoder's input and <s>, or <s> and the prompt on a decoder-only model."""
    from attnlens.model.decoding.loop import Vocabulary, search
    from attnlens.model.decoding.net_steppers import CausalStepper, TransformerStepper
    from attnlens.model.decoding.request import DecodeSettings
    from attnlens.model.lenses.registry import BUNDLED_DIR
    from attnlens.model.net import checkpoint
    from attnlens.model.net.decoder_only import DecoderOnlyTransformer
    from attnlens.model.net.transformer import Transformer

    described = checkpoint.describe(BUNDLED_DIR / name)
    tok, meta = described.tokenizer, described.meta
    decoder_only = meta.get("architecture") == "decoder"
    net: Any = (DecoderOnlyTransformer if decoder_only else Transformer)(described.config)
    checkpoint.load_weights(net, BUNDLED_DIR / name / checkpoint.WEIGHTS, torch.device("cpu"))
    net.eval()
    banned = (tok.pad_id, tok.bos_id, tok.unk_id)
    vocab = Vocabulary(tok.vocab, tok.eos_id, lambda ids: tok.decode(list(ids)), banned)
    ids = tok.encode(str(meta.get("example", "abc"))).ids
    settings = DecodeSettings(strategy, 24, beam_size=4)
    if decoder_only:
        src, prefix = None, [tok.bos_id, *ids]
        make: Any = lambda c: CausalStepper(net, carried=c)  # noqa: E731
    else:
        src, prefix = [*ids, tok.eos_id], [tok.bos_id]
        make = lambda c: TransformerStepper(net, carried=c)  # noqa: E731
    return lambda c: len(search(make(c), settings, src, prefix, vocab)[0])


def llama_case(strategy: Any, folder: Path, prompt: int) -> Search:
    """The Llama-3.2-1B shape (bench/long_inputs.py) through transformers, stepped as the
    Hugging Face lens steps it, never ending (no end token), from a prompt of `prompt` words."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from attnlens.model.decoding.loop import Vocabulary, search
    from attnlens.model.decoding.request import DecodeSettings
    from attnlens.model.lenses.hf.ablation import output_projections
    from attnlens.model.lenses.hf.architecture import detect_architecture, model_info
    from attnlens.model.lenses.hf.stepper import HFStepper
    from bench.long_inputs import LLAMA, build, text_of

    build(LLAMA, 2048, folder)
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    architecture = detect_architecture(model.config)
    info = model_info("llama-shape", architecture, model.config)
    projections = output_projections(model, model.config.model_type, info)
    prefix = tokenizer(text_of(prompt))["input_ids"]
    names = tokenizer.convert_ids_to_tokens(list(range(model.config.vocab_size)))
    vocab = Vocabulary(names, -1, lambda ids: " ".join(names[i] for i in ids), (), (), ())
    settings = DecodeSettings(strategy, 16, beam_size=4)
    make = lambda c: HFStepper(model, architecture, projections, carried=c)  # noqa: E731
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
