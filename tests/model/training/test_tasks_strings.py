"""The strings reverse and sort learn from and the hard suite they are measured on."""

from __future__ import annotations

import random
import string
from collections import Counter

import pytest

from attnlens.model.training.corpus import load_corpus
from attnlens.model.training.tasks import ReverseTask, SortTask
from attnlens.model.training.tasks.strings import PRINTABLE, runs, with_a_run


def test_printable_is_every_printable_ascii_character_in_code_point_order() -> None:
    assert "".join(chr(c) for c in range(32, 127)) == PRINTABLE


def test_training_mixes_random_runs_digits_and_typed_text() -> None:
    task = SortTask()
    sources = [e.source for e in task.examples(2000, seed=0)]
    assert all(1 <= len(s) <= 12 and set(s) <= set(PRINTABLE) for s in sources)
    long = [s for s in sources if len(s) >= 6]
    digits_only = sum(s.isdigit() for s in long) / len(long)
    repeated = sum(Counter(s).most_common(1)[0][1] >= len(s) // 2 for s in long) / len(long)
    assert 0.1 < digits_only < 0.3 and repeated > 0.3  # runs are 40% of sort's mix
    typed = set(load_corpus().train)
    assert sum(any(s in t for t in typed) and " " in s for s in long) > 0.1 * len(long)
    assert sum(len(s) >= 9 for s in sources) > 0.5 * len(sources)  # sort's lengths lean long
    lengths = [len(e.source) for e in ReverseTask().examples(2000, seed=0)]
    assert 0.2 < sum(n >= 13 for n in lengths) / len(lengths) < 0.3  # reverse's do not


def test_runs_draw_from_few_characters_and_a_run_is_long() -> None:
    rng = random.Random(0)
    for n in range(1, 17):
        text = runs(rng, PRINTABLE, n)
        assert len(text) == n and len(set(text)) <= 3
        text = with_a_run(rng, PRINTABLE, max(n, 3))
        assert len(text) == max(n, 3) and any(c * 3 in text for c in set(text))


@pytest.mark.parametrize("task", [ReverseTask(), SortTask()], ids=["reverse", "sort"])
def test_the_hard_suite_holds_what_each_kind_promises(task: ReverseTask | SortTask) -> None:
    suite = task.hard_suite(60, seed=1)
    assert list(suite) == ["repeats", "digits", "mixed case", "shortest", "longest"]
    assert all(len(examples) == 60 for examples in suite.values())
    assert all(any(c * 3 in e.source for c in e.source) for e in suite["repeats"])
    assert all(set(e.source) <= set(string.digits) for e in suite["digits"])
    held_out = load_corpus().held_out  # text the model never trained on
    assert all(any(e.source in s for s in held_out) for e in suite["mixed case"])
    assert sum(any(c.isupper() for c in e.source) for e in suite["mixed case"]) > 20
    assert {len(e.source) for e in suite["shortest"]} == {1, 2}
    assert {len(e.source) for e in suite["longest"]} == {task.max_len}
    for examples in suite.values():
        assert all(task.reference(e.source) == e for e in examples)


def test_the_hard_suite_is_fixed_by_its_seed_and_kinds_do_not_move_each_other() -> None:
    task = SortTask()
    assert task.hard_suite(20, seed=3) == task.hard_suite(20, seed=3)
    assert task.hard_suite(20, seed=3) != task.hard_suite(20, seed=4)
    small, large = task.hard_suite(5, seed=3), task.hard_suite(20, seed=3)
    assert all(large[kind][:5] == small[kind] for kind in small)
