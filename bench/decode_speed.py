"""Decoding speed: our recorded greedy and beam search vs Hugging Face `generate` on the CPU.

Both models are randomly initialised at the size of the bundled reverse model (N=2, d_model=64,
h=4, d_ff=256, its character vocabulary), fed 32 source tokens, and made to produce exactly 32
new tokens: the end token's logit gets a -1e4 bias in both (our generator's bias, BART's
final_logits_bias), so neither stops early and neither needs an extra logits processor.
Ours records everything (`Lens.decode`: every beam, candidates, attention rows as numpy);
HF keeps `output_attentions=True, return_dict_in_generate=True`. Runs interleave, median of
repeats. The per-step table times single steps of one long greedy decode (cache at work).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from transformers import BartConfig, BartForConditionalGeneration

from attnlens.model.decoding.loop import Vocabulary, iter_steps
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.request import DecodeSettings, StrategyName
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.registry import load
from attnlens.model.net import checkpoint
from attnlens.model.net.tokenizer import Tokenizer
from attnlens.model.net.transformer import Transformer
from attnlens.model.training.recipes import get_recipe

SOURCE_LEN, NEW_TOKENS, REPEATS = 32, 32, 21
LONG_STEPS, EARLY, LATE = 80, 8, 64


def our_model(folder: Path) -> tuple[Lens, Transformer, Tokenizer]:
    """A random model of the bundled reverse size that never emits the end token: saved and
    loaded as a lens, and the network and tokenizer it was saved from."""
    recipe = get_recipe("reverse")
    tok = recipe.objective().tokenizer
    torch.manual_seed(0)
    net = Transformer(recipe.model).eval()
    with torch.no_grad():
        net.generator.bias[tok.eos_id] = -1e4
    checkpoint.save(folder, net, tok, {"name": "bench", "max_source_len": 63})
    return load(str(folder), device="cpu"), net, tok


def source_ids(tok: Tokenizer, text: str) -> list[int]:
    """The encoder input our models read: the tokens, then the end token."""
    return [*tok.encode(text).ids, tok.eos_id]


def their_model(vocab: int) -> BartForConditionalGeneration:
    """BART of the same size, eager attention so it can return its weights."""
    c = get_recipe("reverse").model
    config = BartConfig(
        vocab_size=vocab, d_model=c.d_model, encoder_layers=c.N, decoder_layers=c.N,
        encoder_attention_heads=c.h, decoder_attention_heads=c.h, encoder_ffn_dim=c.d_ff,
        decoder_ffn_dim=c.d_ff, max_position_embeddings=c.max_len, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, forced_eos_token_id=None,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        forced_bos_token_id=None,  # type: ignore[call-arg]  # read through **kwargs
    )  # fmt: skip
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    bart = BartForConditionalGeneration(config)
    bart.eval()
    with torch.no_grad():
        bart.final_logits_bias[0, 2] = -1e4
    return bart


def median_seconds(fn: Callable[[], int], repeats: int) -> tuple[float, int]:
    """Median wall time of fn and the number of tokens it produced."""
    times, produced = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        produced = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), produced


def compare(lens: Lens, tok: Tokenizer, bart: BartForConditionalGeneration, text: str) -> list[str]:
    """Rows of the ours-vs-HF table."""
    src = torch.tensor([source_ids(tok, text)])  # (1, 32): the same ids for both

    def ours(strategy: StrategyName, k: int) -> Callable[[], int]:
        return lambda: len(
            lens.decode(text, strategy, beam_size=k, max_len=NEW_TOKENS).output_tokens
        )

    def theirs(k: int) -> Callable[[], int]:
        def run() -> int:
            out: Any = bart.generate(  # type: ignore[misc]  # transformers' own annotation
                src, attention_mask=torch.ones_like(src), max_new_tokens=NEW_TOKENS,
                num_beams=k, do_sample=False, output_attentions=True,
                return_dict_in_generate=True,
            )  # fmt: skip
            return int(out.sequences.size(1)) - 1  # the start token excluded

        return run

    rows = []
    runs: tuple[tuple[str, StrategyName, int], ...] = (
        ("greedy", "greedy", 1),
        ("beam-4", "beam", 4),
    )
    for name, strategy, k in runs:
        ours(strategy, k)(), theirs(k)()  # warm up
        results = [(median_seconds(ours(strategy, k), 1), median_seconds(theirs(k), 1))
                   for _ in range(REPEATS)]  # fmt: skip
        t_ours = statistics.median(r[0][0] for r in results)
        t_hf = statistics.median(r[1][0] for r in results)
        n_ours, n_hf = results[0][0][1], results[0][1][1]
        rows.append(
            f"{name:<8} {t_ours * 1e3:>9.1f} {t_hf * 1e3:>9.1f} {t_ours / t_hf:>7.2f}×"
            f" {n_ours:>5} {n_hf:>5}"
        )
    return rows


def per_step(trained: Transformer, tok: Tokenizer, text: str) -> tuple[float, float]:
    """Median seconds per step around step EARLY and around step LATE (a window of 5 steps
    each) of long greedy decodes, recording included."""
    net = Transformer(replace(trained.config, max_len=LONG_STEPS + 1))  # room for every step
    net.load_state_dict(trained.state_dict())
    net.eval()
    settings = DecodeSettings("greedy", max_len=LONG_STEPS)
    vocab = Vocabulary(tok.vocab, tok.eos_id, lambda ids: tok.decode(list(ids)))
    src = source_ids(tok, text)
    early, late = [], []
    for _ in range(REPEATS):
        times, last = [], time.perf_counter()
        for _progress in iter_steps(TransformerStepper(net), settings, src, [tok.bos_id], vocab):
            now = time.perf_counter()
            times.append(now - last)  # times[t]: feeding position t and recording step t
            last = now
        early.append(statistics.mean(times[EARLY - 2 : EARLY + 3]))
        late.append(statistics.mean(times[LATE - 2 : LATE + 3]))
    return statistics.median(early), statistics.median(late)


def main() -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a shared 2-core machine: one thread each keeps the timings steady
    try:
        report()
    finally:
        torch.set_num_threads(threads)  # the benchmarks after this one run as they would alone


def report() -> None:
    """Print both tables."""
    with tempfile.TemporaryDirectory() as folder:
        lens, net, tok = our_model(Path(folder))
        bart = their_model(len(tok))
        text = ("hello world, attention is all you need" * 2)[: SOURCE_LEN - 1]  # + end token
        print(f"decode speed, CPU, 1 thread: {SOURCE_LEN} source tokens, {NEW_TOKENS} new tokens,")
        print(f"median of {REPEATS}; ours records every step, HF output_attentions=True")
        print(f"{'':<8} {'ours ms':>9} {'HF ms':>9} {'ours/HF':>8} {'n_us':>5} {'n_hf':>5}")
        for row in compare(lens, tok, bart, text):
            print(row)
        early, late = per_step(net, tok, text)
        print(f"\nper step of one {LONG_STEPS}-step greedy decode (key/value cache):")
        print(f"step {EARLY}: {early * 1e3:.2f} ms   step {LATE}: {late * 1e3:.2f} ms   "
              f"ratio {late / early:.2f} (should stay ≤ 2)")  # fmt: skip


if __name__ == "__main__":
    main()
