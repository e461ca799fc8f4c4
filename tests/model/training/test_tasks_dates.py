"""The dates task: every source names a real date, the weekday is right, alignments hit digits."""

import datetime as dt
import random

import pytest

from attnlens.model.training.tasks.dates import FORMATS, MONTHS, WEEKDAYS, DatesTask


def test_targets_are_valid_iso_dates_within_range() -> None:
    for e in DatesTask().examples(500, seed=0):
        date = dt.date.fromisoformat(e.target)
        assert 1900 <= date.year <= 2099
        assert len(e.source) <= DatesTask.max_source_len


def test_given_weekday_matches_the_date() -> None:
    seen = 0
    for e in DatesTask().examples(2000, seed=1):
        first = e.source.split()[0].rstrip(",").lower()
        named = [w for w in WEEKDAYS if first in (w, w[:3])]
        if named:
            assert named[0] == WEEKDAYS[dt.date.fromisoformat(e.target).weekday()]
            seen += 1
    assert seen > 100


def test_year_digits_align_to_the_year() -> None:
    for e in DatesTask().examples(500, seed=2):
        assert "".join(e.source[i] for i in e.alignment[:4]) == e.target[:4]


def _leading(text: str, kind: str) -> str:
    """The run of digits (kind 'digit') or letters at the start of text."""
    test = str.isdigit if kind == "digit" else str.isalpha
    end = next((i for i, ch in enumerate(text) if not test(ch)), len(text))
    return text[:end]


def test_month_and_day_align_to_the_start_of_their_source() -> None:
    for e in DatesTask().examples(1000, seed=3):
        month, day = int(e.target[5:7]), int(e.target[8:10])
        at_month, at_day = e.source[e.alignment[5] :], e.source[e.alignment[8] :]
        if at_month[0].isdigit():
            assert int(_leading(at_month, "digit")) == month
        else:
            assert MONTHS[month - 1].startswith(_leading(at_month, "alpha").lower())
        assert int(_leading(at_day, "digit")) == day
        for t in (6, 9):  # the last digit always comes from a digit or the month's name
            src = e.source[e.alignment[t]]
            assert src == e.target[t] or src.isalpha()


def test_named_month_aligns_to_its_first_letter() -> None:
    task = DatesTask(formats=("{month} {d}, {y}",))
    e = task.sample(random.Random(0))
    assert e.alignment[5] == e.alignment[6] == 0
    assert e.alignment[4] == 0  # the hyphen introduces the month


def test_padding_zero_aligns_to_the_number() -> None:
    task = DatesTask(formats=("{d}/{m}/{y}",))
    for e in task.examples(200, seed=4):
        if e.target.endswith(("-01", "-02", "-03")) and e.target[5] == "0":
            assert e.alignment[8] == e.alignment[9] == 0  # the day is first
            assert e.source[e.alignment[6]] == e.target[6]
            return
    pytest.fail("no single-digit day and month in 200 examples")


def test_every_format_is_used_and_covered_by_the_vocabulary() -> None:
    task = DatesTask()
    for fmt in FORMATS:
        for e in DatesTask(formats=(fmt,)).examples(50, seed=5):
            assert not task.tokenizer.encode(e.source).unknown, e.source
            assert len(e.alignment) == len(e.target) == 10


def test_reference_reads_every_generated_date_back() -> None:
    task = DatesTask()
    for e in task.examples(2000, seed=8):
        assert task.reference(e.source) == e


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("sat 21 nov 2026", "2026-11-21"),
        ("21st November 2026", "2026-11-21"),
        ("1/2/1999", "1999-02-01"),
        ("SAT 21 Nov 2026", "2026-11-21"),
        ("SATURDAY, NOVEMBER 21, 2026", "2026-11-21"),
    ],
)
def test_reference_of_typed_dates(text: str, iso: str) -> None:
    e = DatesTask().reference(text)
    assert e is not None and e.target == iso and len(e.alignment) == 10


@pytest.mark.parametrize(
    "text", ["sun 21 nov 2026", "31/02/2026", "21/11/1899", "sAT 21 nov 2026", "hello", ""]
)
def test_reference_refuses_what_the_task_never_writes(text: str) -> None:
    """A wrong weekday, an impossible or out-of-range date, or no format at all."""
    assert DatesTask().reference(text) is None


def test_names_come_lower_case_capitalised_and_in_capitals() -> None:
    sources = [e.source for e in DatesTask().examples(2000, seed=9)]
    names = [w.strip(",.") for s in sources for w in s.split() if w.strip(",.").isalpha()]
    assert {"lower", "capitalised", "capitals"} == {
        "capitals" if w.isupper() else "capitalised" if w[0].isupper() else "lower" for w in names
    }


def test_the_hard_suite_holds_what_each_kind_promises() -> None:
    task = DatesTask()
    suite = task.hard_suite(80, seed=1)
    assert list(suite) == ["edge dates", "repeats", "mixed case", "shortest", "longest"]
    for examples in suite.values():
        assert len(examples) == 80 and all(task.reference(e.source) == e for e in examples)
    days = [e.target for e in suite["edge dates"]]
    assert all(d[8:] in ("01", "28", "29", "30", "31") for d in days)
    assert {"1900", "2099"} <= {d[:4] for d in days} and any(d[5:] == "02-29" for d in days)
    assert all(e.target[5:7] == e.target[8:] for e in suite["repeats"])  # 11/11/2011
    capitals = [any(w.strip(",.").isupper() for w in e.source.split()) for e in suite["mixed case"]]
    assert sum(capitals) > 40  # "SAT 21 Nov 2026": half or more of them
    assert all(len(e.source) <= 9 for e in suite["shortest"])
    assert all(len(e.source) >= 27 for e in suite["longest"])
