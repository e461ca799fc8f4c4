"""Errors raised for bad input: each message names the value and the limit."""

from __future__ import annotations

from collections.abc import Iterable


class InputError(ValueError):
    """What the caller passed cannot be used; the message is fit to show a user."""


class ModelNotFoundError(InputError):
    """The model name is not bundled, not a local folder, and not reachable."""


def clipped(value: str, limit: int = 60) -> str:
    """value as a message names it: its first `limit` characters, then "…" when there are more
    (a 2,000-character name filled the screen, twice)."""
    return value if len(value) <= limit else value[:limit] + "…"


def quoted(pieces: Iterable[str]) -> str:
    """Each distinct piece quoted on its own, in order: 'The', 'house.' (quoted together,
    'The house.' read as one word)."""
    return ", ".join(map(repr, dict.fromkeys(pieces)))
