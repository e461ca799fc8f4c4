"""The suites `attnlens eval` measures: held-out examples, and the hard suite kind by kind."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.transformer import Transformer
from attnlens.model.training.corpus import MAX_CHARS, load_corpus
from attnlens.model.training.evaluate import (
    combined,
    evaluate,
    evaluate_task,
    lm_hard_suite,
)
from attnlens.model.training.tasks import get_task
from attnlens.record.errors import InputError


def _untrained(vocab: int) -> Transformer:
    torch.manual_seed(0)
    return Transformer(TransformerConfig(vocab, vocab, N=2, d_model=16, d_ff=32, h=2, max_len=32))


@pytest.mark.parametrize("task_name", ["sort", "translate"])
def test_the_hard_suite_is_scored_kind_by_kind_and_as_a_whole(task_name: str) -> None:
    task = get_task(task_name)
    tok = task.tokenizer
    net = _untrained(len(tok)).eval()
    report = evaluate_task("m", net, tok, task, 12, seed=5, suite="hard")
    suite = task.hard_suite(12, seed=5)
    assert report.suite == "hard" and [k.kind for k in report.kinds] == list(suite)
    parts = []
    for kind, score in zip(suite, report.kinds, strict=True):
        read = [replace(e, source=task.read(e.source).text) for e in suite[kind]]
        part = evaluate(net, tok, read)
        parts.append(part)
        assert (score.n, score.exact, score.best_head) == (12, part.exact, part.best_head)
    if task_name == "sort":  # sort reads text as typed: the whole suite is one evaluation
        whole = evaluate(net, tok, [e for examples in suite.values() for e in examples])
        np.testing.assert_allclose(report.head_alignment, whole.head_alignment, atol=1e-4)
        assert report.exact == pytest.approx(whole.exact)
    assert report.n == 12 * len(suite)
    assert report.exact == pytest.approx(combined(parts).exact)


def test_combined_weighs_alignment_by_tokens() -> None:
    task = get_task("reverse")
    net = _untrained(len(task.tokenizer)).eval()
    a, b = task.examples(5, seed=1), task.examples(9, seed=2)
    both = combined([evaluate(net, task.tokenizer, a), evaluate(net, task.tokenizer, b)])
    whole = evaluate(net, task.tokenizer, a + b)
    np.testing.assert_allclose(both.head_alignment, whole.head_alignment, atol=1e-12)
    assert (both.n, both.tokens, both.best_head) == (14, whole.tokens, whole.best_head)


def test_the_language_model_s_hard_suite() -> None:
    held_out = load_corpus().held_out
    suite = lm_hard_suite(held_out, 1000)
    assert list(suite) == ["upper case", "lower case", "shortest", "longest", "repeats"]
    assert suite["upper case"] == [s.upper() for s in held_out]
    assert max(map(len, suite["shortest"])) <= min(map(len, suite["longest"]))
    assert all(len(s) <= MAX_CHARS and s[: len(s) // 2] == s[len(s) // 2 + 1 :]
               for s in suite["repeats"])  # fmt: skip
    assert all(len(texts) == 3 for texts in lm_hard_suite(held_out, 3).values())


def test_an_unknown_suite_is_refused_by_name() -> None:
    task = get_task("sort")
    with pytest.raises(InputError, match="suite must be one of held-out, hard, got 'easy'"):
        evaluate_task("m", _untrained(len(task.tokenizer)), task.tokenizer, task, 5, 0, "easy")
