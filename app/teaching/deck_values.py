"""How a deck reads a field's value (app/teaching/deck.py): a whole number in a range, a
number, one of a list, text; each a ValueError saying what it must be and what it got, which the
deck turns into a DeckError naming the slide, line and field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def whole(low: int, high: int | None = None, words: tuple[str, ...] = ()) -> Callable[[str], Any]:
    """A whole number in low..high (no top when high is None), or one of `words`."""

    def parse(value: str) -> int | str:
        if value in words:
            return value
        allowed = " or ".join([f"a whole number from {low}", *words])
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"must be {allowed}, got {value!r}") from None
        if number < low or (high is not None and number > high):
            top = f"..{high}" if high is not None else " up"
            raise ValueError(f"must be in {low}{top}, got {number}")
        return number

    return parse


def number(low: float, high: float, low_open: bool = True) -> Callable[[str], float]:
    """A number above low (or from it, when not low_open) and at most high."""

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"must be a number, got {value!r}") from None
        if not (low < number if low_open else low <= number) or number > high:
            raise ValueError(f"must be above {low} and at most {high}, got {number}")
        return number

    return parse


def one_of(options: tuple[str, ...] | list[str]) -> Callable[[str], str]:
    """One of the options, spelled as they are."""

    def parse(value: str) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}, got {value!r}")
        return value

    return parse


def text(value: str) -> str:
    """Any text but none."""
    if not value:
        raise ValueError("is empty")
    return value
