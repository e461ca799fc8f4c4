"""A GPT-2-shaped model with random weights that reads long inputs (600 positions), and a
word-level tokenizer (one token a word, `w0 w1 …`), saved once per test process; nothing is
downloaded. Small (2 layers × 2 heads, 16 wide) so a trace of 400 tokens takes ms."""

from __future__ import annotations

import functools
from pathlib import Path

POSITIONS = 600
VOCAB = 64


@functools.cache
def long_gpt2(folder: Path) -> Path:
    """The model saved in folder (once per process and folder)."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    config = T.GPT2Config(
        vocab_size=VOCAB, n_positions=POSITIONS, n_embd=16, n_layer=2, n_head=2,
        bos_token_id=0, eos_token_id=1,
    )  # fmt: skip
    T.GPT2LMHeadModel(config).eval().save_pretrained(folder)
    save_word_tokenizer(folder, VOCAB)
    return folder


def save_word_tokenizer(folder: Path, vocab: int) -> None:
    """A word-level tokenizer of `vocab` ids saved in folder: <s> 0, </s> 1 (also the unknown
    word), then w0, w1, … (one token a word; bench/long_inputs.py uses it too)."""
    import transformers as T
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = {"<s>": 0, "</s>": 1, **{f"w{i}": i + 2 for i in range(vocab - 2)}}
    tok = Tokenizer(models.WordLevel(words, unk_token="</s>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = T.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(folder)


def words(n: int) -> str:
    """n words, so n tokens."""
    return " ".join(f"w{(i * 7) % (VOCAB - 2)}" for i in range(n))
