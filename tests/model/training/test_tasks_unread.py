"""A task model never answers wrong without a word: a text its task cannot read says so in the
notes that become the run's warnings, naming why (issue 38: dates read "the 3rd of March,
1999" as 1999-10-03 and "26.XI.2026" as 2026-02-26 with no warning)."""

from __future__ import annotations

import pytest

from attnlens.model.training.tasks import DatesTask, ReverseTask, SortTask, TranslateTask


@pytest.mark.parametrize("text", ["the 3rd of March, 1999", "26.XI.2026", "Nov 26th '26"])
def test_dates_says_it_cannot_read_a_writing_it_was_not_trained_on(text: str) -> None:
    task = DatesTask()
    assert task.reference(text) is None
    (note,) = task.read(text).notes
    assert note.startswith(f"dates cannot read {text!r}: it was trained only on dates from 1900")
    assert "in one of these 17 ways" in note and "no right answer" in note
    for writing in ("thu 5 mar 2026", "march 5, 2026", "05/03/2026", "2026-03-05"):
        assert writing in note  # the formats it was trained on, by example


def test_each_trained_writing_is_read_back_as_its_date() -> None:
    task = DatesTask()
    writings = task.trained_writings()
    assert len(writings) == len(task.formats) == 17
    for writing in writings:
        ref = task.reference(writing)
        assert ref is not None and ref.target == "2026-03-05", writing
        assert task.read(writing).notes == ()


def test_a_trained_writing_of_no_real_date_says_that_instead() -> None:
    note = " ".join(DatesTask().read("mon 21 nov 2026").notes)  # 21 Nov 2026 is a Saturday
    assert "it is no date from 1900 to 2099 (or not on the weekday it names)" in note
    assert "it is no date from 1900" in " ".join(DatesTask().read("31/02/2026").notes)


@pytest.mark.parametrize("task", [SortTask(), ReverseTask()])
def test_strings_name_the_characters_they_were_not_trained_on(task: SortTask) -> None:
    (note,) = task.read("héllo wörld").notes
    assert note.startswith(f"{task.name} cannot read 'héllo wörld': 'é', 'ö' are not among")
    assert task.read("hello world").notes == ()
    assert task.read("zzzzzzzzzzzzzzzzzz").notes == ()  # too long, but the answer is known


def test_translate_names_unknown_words_and_sentences_outside_its_grammar() -> None:
    task = TranslateTask()
    notes = task.read("The dog sees a xylophone.").notes
    assert "reads lower-case words without punctuation" in notes[0]
    assert "'xylophone' is not among the English words it knows" in notes[1]
    (note,) = task.read("house the sees cat").notes
    assert "it is not a sentence of its grammar" in note
    assert task.read("the cat sees a house").notes == ()
    assert "xylophone" not in task.source_words() and "house" in task.source_words()


def test_translate_takes_any_synonym_as_right_and_nothing_else() -> None:
    """Beam search writes 'kasa' where the reference (greedy's synonyms) has 'ca dom': both
    are right, so the page must not name a 'right answer' against it."""
    task = TranslateTask()
    source = "the man says that the girl sees a house"
    ref = task.reference(source)
    assert ref is not None and ref.target == "lo om dice ke lo nina un ca dom vid"
    assert task.accepts(source, ref.target)
    assert task.accepts(source, "lo om dice ke lo nina un kasa vid")
    assert task.accepts(source, "lo om dice ke lo nina un ca tet vid")
    assert not task.accepts(source, "lo om dice ke lo nina un kasa")  # the verb is missing
    assert not task.accepts(source, "lo om dice ke lo nina un ca vid")
    assert not task.accepts("house the sees", "kasa")  # outside the grammar: cannot tell
    assert DatesTask().accepts("sat 21 nov 2026", "2026-11-21")
    assert not DatesTask().accepts("sat 21 nov 2026", "2026-11-22")
