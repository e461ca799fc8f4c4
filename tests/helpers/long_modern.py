"""Modern decoder shapes with random weights that read long inputs, for the marks of modern
attention (viz/heads/head_marks.py): a Llama shape with grouped-query attention (32 query heads over
8 key/value heads, as Llama-3.2-1B), Mistral with a sliding window on every layer, and Gemma-2
alternating sliding and global layers. Hidden sizes shrunk so a trace of 400 tokens takes a
fraction of a second; the word-level tokenizer of tests/helpers/long_gpt2.py; nothing is
downloaded. Each saved once per process and folder."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from helpers.long_gpt2 import VOCAB, save_word_tokenizer

POSITIONS = 2048
WINDOW = 64  # the sliding window of the windowed shapes, in keys
SHAPES = ("llama", "mistral", "gemma2")


def _config(shape: str) -> Any:
    import transformers as T

    common = dict(vocab_size=VOCAB, intermediate_size=32, num_hidden_layers=2,
                  max_position_embeddings=POSITIONS, bos_token_id=0, eos_token_id=1,
                  pad_token_id=1, head_dim=4)  # fmt: skip
    if shape == "llama":  # Llama-3.2-1B's heads: 32 query heads, 8 key/value heads
        return T.LlamaConfig(hidden_size=32, num_attention_heads=32, num_key_value_heads=8,
                             **common)  # fmt: skip
    if shape == "mistral":
        return T.MistralConfig(hidden_size=16, num_attention_heads=4, num_key_value_heads=2,
                               sliding_window=WINDOW, **common)  # fmt: skip
    if shape == "gemma2":  # layer 0 slides, layer 1 sees every key
        return T.Gemma2Config(hidden_size=16, num_attention_heads=4, num_key_value_heads=2,
                              sliding_window=WINDOW, **common)  # fmt: skip
    raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")


@functools.cache
def long_modern(shape: str, folder: Path) -> Path:
    """The model of `shape` saved in folder."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    config = _config(shape)
    T.AutoModelForCausalLM.from_config(config).eval().save_pretrained(folder)
    save_word_tokenizer(folder, VOCAB)
    return folder
