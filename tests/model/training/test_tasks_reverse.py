"""The reverse task: target i is source position len - 1 - i, for samples and typed text."""

from __future__ import annotations

import random

from attnlens.model.training.tasks import ReverseTask
from attnlens.record.example import Example


def test_samples_are_reversed_with_the_anti_diagonal() -> None:
    task = ReverseTask()
    for e in task.examples(200, seed=0):
        assert e.target == e.source[::-1]
        assert [e.source[i] for i in e.alignment] == list(e.target)
    assert len(ReverseTask(max_len=4).sample(random.Random(1)).source) <= 4


def test_reference_reverses_typed_text_of_the_vocabulary() -> None:
    task = ReverseTask()
    assert task.reference("ab c") == Example("ab c", "c ba", (3, 2, 1, 0))
    assert task.reference("Hi, you!") == Example("Hi, you!", "!uoy ,iH", (7, 6, 5, 4, 3, 2, 1, 0))
    assert task.reference("naïve") is None and task.reference("") is None
    e = task.examples(1, seed=9)[0]
    assert task.reference(e.source) == e
