"""The bundled reverse model: it reverses, and its cross-attention traces the anti-diagonal."""

from __future__ import annotations

import numpy as np

from model import load
from model.evaluate import evaluate
from model.recipes import get_recipe
from model.seq2seq import Seq2SeqLens


def test_reverse_is_accurate_and_aligned_on_held_out_strings() -> None:
    lens = load("reverse", device="cpu")
    assert isinstance(lens, Seq2SeqLens)
    task = get_recipe("reverse").make_task()
    held_out = task.examples(300, seed=424242)  # training draws from seed 0
    result = evaluate(lens.net, lens.tokenizer, held_out)
    assert result.exact >= 0.99, result.exact
    assert result.best_alignment >= 0.95, result.best_alignment


def test_hello_world_cross_attention_shows_the_reversal() -> None:
    tr = load("reverse", device="cpu").trace("hello world")
    assert "".join(tr.tgt_tokens[1:]) == "dlrow olleh"
    assert tr.cross is not None
    n = len("hello world")
    mirrored = np.arange(n - 1, -1, -1)
    best = max(
        (np.mean(tr.cross[layer, head, :n].argmax(-1) == mirrored), layer, head)
        for layer in range(tr.cross.shape[0])
        for head in range(tr.cross.shape[1])
    )
    assert best[0] >= 0.9, best
