"""Errors raised for bad input: each message names the value and the limit."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

# invisible on their own, yet part of what is drawn around them: an emoji's zero-width joiner,
# a variation selector, a skin tone, a combining mark (category M) join the character before
JOINER = "\u200d"  # joins the emoji before it to the one after
JOINING_CATEGORIES = ("Mn", "Me", "Mc")
JOINING = {chr(c) for c in (*range(0xFE00, 0xFE10), *range(0x1F3FB, 0x1F400))}
JOINING |= {chr(c) for c in range(0xE0020, 0xE0080)}  # the tags of a flag's emoji
# what reorders the text around it (bidirectional controls): written as its code, never drawn
REORDERING = {chr(c) for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}
ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


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
    'The house.' read as one word); a piece that draws nothing on its own is named."""
    return ", ".join(map(literal_piece, dict.fromkeys(pieces)))


def literal(text: str) -> str:
    """text quoted as a person reads it: every character drawn as itself (an emoji of several
    code points whole, where repr wrote its joiners as \\u200d), only what would move or
    hide the text around it written as a code: a control character (\\t) or a bidirectional
    override."""
    out = []
    for ch in text:
        if ch in ESCAPES:
            out.append(ESCAPES[ch])
        elif ch in REORDERING or unicodedata.category(ch) == "Cc":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    quote = '"' if "'" in text and '"' not in text else "'"
    return quote + "".join(out) + quote


def literal_piece(piece: str) -> str:
    """One piece of a text (a character, a token) quoted as literal() does; a piece that
    draws nothing by itself, such as an emoji's joiner alone, named by its code and name
    (U+200D ZERO WIDTH JOINER) rather than shown as empty quotes (a control character is
    written as literal() writes it, '\\t')."""
    if piece and all(_invisible(ch) and ch not in REORDERING for ch in piece):
        return " ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in piece)
    return literal(piece)


def _invisible(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category in ("Cf", "Cn", "Co", "Cs") or category in JOINING_CATEGORIES or ch in JOINING


def characters(text: str) -> Iterator[str]:
    """The characters of text as a person counts them: a base character with what joins it
    (a combining accent, a variation selector, a skin tone, a joiner and the emoji after it),
    so 👩‍👩‍👧 is one, not five."""
    cluster = ""
    for ch in text:
        joins = cluster and (
            ch in JOINING
            or unicodedata.category(ch) in JOINING_CATEGORIES
            or ch == JOINER
            or cluster.endswith(JOINER)
        )
        if joins:
            cluster += ch
        else:
            if cluster:
                yield cluster
            cluster = ch
    if cluster:
        yield cluster
