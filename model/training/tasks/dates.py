"""Dates in many human formats → ISO 8601, with the source position behind every output digit.

Alignment rules, where a target character has no single source character:
- a month given by name ("November", "nov") → both digits of "11" align to the name's first letter;
- a zero added as padding ("1" → "01") aligns to the first source character of that number;
- the two hyphens of "YYYY-MM-DD" align to the first source character of the field they
  introduce (the month, then the day).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from attnlens.model.training.tasks.base import HardSuite, Task, kind_rng
from attnlens.record.example import Example

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
FIRST, LAST = dt.date(1900, 1, 1).toordinal(), dt.date(2099, 12, 31).toordinal()


@dataclass(frozen=True)
class Piece:
    """A stretch of source text; field says which part of the date it writes, if any."""

    text: str
    field: str = ""  # "year", "month", "day" or "" for words and punctuation


def _case(word: str, rng: random.Random) -> str:
    """A name as people type it: lower case, capitalised (as often), or in capitals."""
    pick = rng.random()
    return word.capitalize() if pick < 0.4 else word.upper() if pick < 0.55 else word


def _lower(word: str, rng: random.Random) -> str:
    """Names as written in the list of formats: lower case."""
    return word


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


Case = Callable[[str, random.Random], str]


def _words(d: dt.date, rng: random.Random, case: Case = _case) -> dict[str, str]:
    """Every spelling of the date's parts that a format may use, cased at random."""
    month, weekday = MONTHS[d.month - 1], WEEKDAYS[d.weekday()]
    return {
        "wd": case(weekday[:3], rng),
        "weekday": case(weekday, rng),
        "mon": case(month[:3], rng),
        "month": case(month, rng),
        "d": str(d.day),
        "dd": f"{d.day:02d}",
        "ord": _ordinal(d.day),
        "m": str(d.month),
        "mm": f"{d.month:02d}",
        "y": str(d.year),
    }


# Each format: "{part}" slots between literal text. Slashes and dots put the day first, so
# no source is ambiguous between day and month.
FORMATS = (
    "{wd} {d} {mon} {y}",
    "{month} {d}, {y}",
    "{dd}/{mm}/{y}",
    "{d}/{m}/{y}",
    "{y}.{mm}.{dd}",
    "{d} {month} {y}",
    "{mon} {d} {y}",
    "{weekday}, {month} {d}, {y}",
    "{dd}.{mm}.{y}",
    "{y}/{mm}/{dd}",
    "{d}-{mon}-{y}",
    "{ord} {month} {y}",
    "{wd}, {d} {mon} {y}",
    "{y}-{mm}-{dd}",
    "{month} {ord}, {y}",
    "{mon}. {d}, {y}",
    "{weekday} {ord} {mon} {y}",
)
FIELD_OF = {"d": "day", "dd": "day", "ord": "day", "m": "month", "mm": "month", "mon": "month"}
FIELD_OF |= {"month": "month", "y": "year"}


def parse_format(fmt: str, words: dict[str, str]) -> list[Piece]:
    """The pieces of a format filled in with the date's words."""
    pieces, rest = [], fmt
    while rest:
        start = rest.find("{")
        if start < 0:
            pieces.append(Piece(rest))
            break
        if start:
            pieces.append(Piece(rest[:start]))
        end = rest.index("}", start)
        slot = rest[start + 1 : end]
        pieces.append(Piece(words[slot], FIELD_OF.get(slot, "")))
        rest = rest[end + 1 :]
    return pieces


def _names(names: list[str]) -> str:
    """Names as _case writes them: all lower case, capitalised, or in capitals."""
    return "|".join(f"{n}|{n.capitalize()}|{n.upper()}" for n in names)


SLOT_PATTERNS = {
    "wd": _names([w[:3] for w in WEEKDAYS]),
    "weekday": _names(WEEKDAYS),
    "mon": _names([m[:3] for m in MONTHS]),
    "month": _names(MONTHS),
    "d": r"[1-9]\d?",
    "dd": r"\d\d",
    "ord": r"[1-9]\d?(?:st|nd|rd|th)",
    "m": r"[1-9]\d?",
    "mm": r"\d\d",
    "y": r"\d{4}",
}


def _match(fmt: str, source: str) -> dict[str, str] | None:
    """The text of each slot when source is written in fmt, else None."""
    pattern = "".join(
        f"(?P<{part[1:-1]}>{SLOT_PATTERNS[part[1:-1]]})"
        if part.startswith("{")
        else re.escape(part)
        for part in re.split(r"(\{\w+\})", fmt)
        if part
    )
    found = re.fullmatch(pattern, source)
    return None if found is None else found.groupdict()


def _date_of(words: dict[str, str]) -> dt.date | None:
    """The date the slots write, if it is a real one in range and its weekday is right."""
    day = next(int(words[k].rstrip("stndrh")) for k in ("d", "dd", "ord") if k in words)
    month_text = next(words[k] for k in ("m", "mm", "mon", "month") if k in words)
    month = int(month_text) if month_text.isdigit() else _month_number(month_text)
    try:
        date = dt.date(int(words["y"]), month, day)
    except ValueError:
        return None
    if not FIRST <= date.toordinal() <= LAST:
        return None
    weekday = WEEKDAYS[date.weekday()]
    written = words.get("wd") or words.get("weekday")
    if written is not None and not weekday.startswith(written.lower()):
        return None
    return date


def _month_number(name: str) -> int:
    return [m[:3] for m in MONTHS].index(name[:3].lower()) + 1


def _digits_alignment(text: str, start: int, width: int) -> list[int]:
    """Source positions of a number written width digits wide (padding zeros → its start)."""
    digits = len(text) - len(text.lstrip(string.digits)) if text[:1].isdigit() else 0
    if digits == 0:  # a name: every digit comes from its first letter
        return [start] * width
    positions = [start + i for i in range(digits)]
    return [start] * (width - digits) + positions[-width:]


def iso_alignment(pieces: list[Piece]) -> tuple[int, ...]:
    """For each character of YYYY-MM-DD, the source position it comes from."""
    starts: dict[str, tuple[str, int]] = {}
    at = 0
    for p in pieces:
        if p.field:
            starts[p.field] = (p.text, at)
        at += len(p.text)
    (year, y0), (month, m0), (day, d0) = starts["year"], starts["month"], starts["day"]
    return tuple(
        _digits_alignment(year, y0, 4)
        + [m0]
        + _digits_alignment(month, m0, 2)
        + [d0]
        + _digits_alignment(day, d0, 2)
    )


class DatesTask(Task):
    """Human-written dates from 1900 to 2099, weekdays always right, to YYYY-MM-DD."""

    name = "dates"
    description = (
        "Dates in many formats → ISO YYYY-MM-DD; cross-attention jumps to the year, the month "
        "and the day wherever the format puts them."
    )
    chars = string.ascii_lowercase + string.ascii_uppercase + string.digits + " ,./-"
    max_source_len = 32
    example = "sat 21 nov 2026"

    def __init__(self, formats: tuple[str, ...] = FORMATS) -> None:
        self.formats = formats

    def sample(self, rng: random.Random) -> Example:
        return self.written(dt.date.fromordinal(rng.randint(FIRST, LAST)), rng)

    def written(
        self, date: dt.date, rng: random.Random, formats: tuple[str, ...] = (), case: Case = _case
    ) -> Example:
        """date written in one of formats (the task's own when none are given)."""
        pieces = parse_format(rng.choice(formats or self.formats), _words(date, rng, case))
        source = "".join(p.text for p in pieces)
        return Example(source, date.isoformat(), iso_alignment(pieces))

    def hard_suite(self, n: int, seed: int) -> HardSuite:
        """Edge dates (first and last days, 1900 and 2099, 29 February), repeated digits
        (11/11/2011), names in mixed case ("SAT 21 Nov 2026"), the shortest and the longest
        writings."""
        names = ("{wd}", "{weekday}", "{mon}", "{month}")
        named = tuple(f for f in self.formats if any(n in f for n in names)) or self.formats
        draws: dict[str, Callable[[random.Random], Example]] = {
            "edge dates": lambda r: self.written(_edge_date(r), r),
            "repeats": lambda r: self.written(_repetitive_date(r), r),
            "mixed case": lambda r: self.written(_any_date(r), r, named, _mixed_case),
            "shortest": lambda r: _shortest(self, r),
            "longest": lambda r: _longest(self, r),
        }
        suite: HardSuite = {}
        for kind, draw in draws.items():
            rng = kind_rng(seed, kind)
            suite[kind] = [draw(rng) for _ in range(n)]
        return suite

    knows_answers = True

    def trained_writings(self) -> list[str]:
        """One date (Thursday 5 March 2026) in each format the task was trained on."""
        rng, date = random.Random(0), dt.date(2026, 3, 5)
        return [
            "".join(p.text for p in parse_format(f, _words(date, rng, _lower)))
            for f in self.formats
        ]

    def why_unread(self, text: str) -> str:
        """A date in a trained format that is no real date (or names the wrong weekday), or
        a writing it was not trained on: then every format it was, by example."""
        if any(_match(fmt, text) is not None for fmt in self.formats):
            return "it is no date from 1900 to 2099 (or not on the weekday it names)"
        return (
            f"it was trained only on dates from 1900 to 2099 written in one of these "
            f"{len(self.formats)} ways (names in lower case, Capitalised or CAPITALS): "
            + "; ".join(self.trained_writings())
        )

    def reference(self, source: str) -> Example | None:
        """Read a typed date back through the formats; None unless one matches a real date
        from 1900 to 2099 (with the right weekday, when one is written)."""
        for fmt in self.formats:
            words = _match(fmt, source)
            if words is None:
                continue
            date = _date_of(words)
            if date is not None:
                pieces = parse_format(fmt, words)
                return Example(source, date.isoformat(), iso_alignment(pieces))
        return None


def _any_date(rng: random.Random) -> dt.date:
    return dt.date.fromordinal(rng.randint(FIRST, LAST))


def _edge_date(rng: random.Random) -> dt.date:
    """The first or last day of a month, in the first or last years of the range, or 29 Feb."""
    year = rng.choice([1900, 1901, 2000, 2098, 2099, rng.randint(1900, 2099)])
    if rng.random() < 0.2:
        return dt.date(rng.choice([1904, 1960, 2000, 2024, 2096]), 2, 29)
    month = rng.randint(1, 12)
    last = (dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1)).day
    return dt.date(year, month, rng.choice([1, last]))


def _repetitive_date(rng: random.Random) -> dt.date:
    """Day and month the same number, in a year of repeated digits: 11/11/2011, 2.2.2022."""
    month = rng.randint(1, 12)
    year = rng.choice([1900, 1911, 1919, 1944, 1955, 1977, 1988, 1999, 2000, 2002, 2011, 2020,
                       2022, 2033, 2055, 2088, 2099])  # fmt: skip
    return dt.date(year, month, month)


def _mixed_case(word: str, rng: random.Random) -> str:
    """Names in capitals as often as not: "SAT 21 Nov 2026"."""
    return word.upper() if rng.random() < 0.5 else _case(word, rng)


def _shortest(task: DatesTask, rng: random.Random) -> Example:
    """Dates written in at most 9 characters: 1/2/1999."""
    while len((e := task.written(_any_date(rng), rng)).source) > 9:
        pass
    return e


def _longest(task: DatesTask, rng: random.Random) -> Example:
    """Dates written in at least 27 characters: Wednesday, September 27, 2023."""
    while len((e := task.written(_any_date(rng), rng)).source) < 27:
        pass
    return e
