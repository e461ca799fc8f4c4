"""The sort task: targets are sorted sources and alignments point at the characters written."""

from attnlens.model.training.tasks import get_task
from attnlens.model.training.tasks.sort import SortTask, sorted_positions
from attnlens.record.example import Example


def test_targets_are_sorted_sources() -> None:
    for e in SortTask().examples(300, seed=0):
        assert e.target == "".join(sorted(e.source))
        assert 1 <= len(e.source) <= 12


def test_alignment_is_a_permutation_onto_the_written_characters() -> None:
    for e in SortTask().examples(300, seed=1):
        assert sorted(e.alignment) == list(range(len(e.source)))
        assert "".join(e.source[i] for i in e.alignment) == e.target


def test_duplicates_align_left_to_right() -> None:
    assert sorted_positions("b1a1b") == (1, 3, 2, 0, 4)


def test_vocabulary_covers_every_generated_character() -> None:
    task = get_task("sort")
    assert all(not task.tokenizer.encode(e.source).unknown for e in task.examples(200, seed=2))


def test_same_seed_same_examples() -> None:
    assert SortTask().examples(20, seed=5) == SortTask().examples(20, seed=5)


def test_reference_sorts_any_text_of_the_vocabulary() -> None:
    task = SortTask()
    for e in task.examples(200, seed=3):
        assert task.reference(e.source) == e
    assert task.reference("b2a2") == Example("b2a2", "22ab", (1, 3, 2, 0))
    assert task.reference("Hello, World!") == task.answer("Hello, World!")
    assert task.reference("Hello, World!").target == " !,HWdellloor"  # as Python's sorted()
    assert task.reference("naïve") is None and task.reference("") is None
