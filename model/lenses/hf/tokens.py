"""Readable forms of subword tokens for display; the record keeps the tokenizer's own strings."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

WORD_START = "▁"  # SentencePiece marks a piece that begins a word
CONTINUATION = "##"  # WordPiece marks a piece that continues a word
BYTE_LEVEL_HINTS = ("Ġ", "Ċ", "ĉ")  # byte-level BPE's stand-ins for space, newline, tab
WHITESPACE_SHOWN = {"\n": "⏎", "\t": "⇥", "\r": "␍"}
SPACE_SHOWN = "␣"


@lru_cache(maxsize=1)
def _unicode_to_byte() -> dict[str, int]:
    """Inverse of byte-level BPE's byte → printable character table (GPT-2 §2.2 encoding)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    kept += range(ord("®"), ord("ÿ") + 1)
    table = {chr(b): b for b in kept}
    moved = [b for b in range(256) if b not in table.values()]
    table.update({chr(256 + n): b for n, b in enumerate(moved)})
    return table


def _from_byte_level(token: str) -> str:
    """The text a byte-level BPE token stands for; a character split across tokens shows its
    bytes here as \\xNN escapes; characters outside the table are kept as is."""
    table = _unicode_to_byte()
    if not all(ch in table for ch in token):
        return token
    return bytes(table[ch] for ch in token).decode("utf-8", errors="backslashreplace")


def _visible(text: str) -> str:
    """Leading/trailing spaces dropped, other whitespace drawn, a lone space as ␣."""
    if text and not text.strip(" "):
        return SPACE_SHOWN
    shown = text.strip(" ")
    for char, mark in WHITESPACE_SHOWN.items():
        shown = shown.replace(char, mark)
    return shown


def display_token(token: str, byte_level: bool = False) -> str:
    """The surface text of one token: Ġ/▁ word-start markers and ## continuation marks removed."""
    if byte_level:
        return _visible(_from_byte_level(token))
    if token.startswith(CONTINUATION) and len(token) > len(CONTINUATION):
        return _visible(token[len(CONTINUATION) :])
    return _visible(token.replace(WORD_START, " "))


def guess_byte_level(tokens: Sequence[str]) -> bool:
    """Whether tokens look like byte-level BPE (GPT-2, RoBERTa, BART): a Ġ/Ċ/ĉ is present."""
    return any(hint in token for token in tokens for hint in BYTE_LEVEL_HINTS)


def display_tokens(tokens: Sequence[str], byte_level: bool | None = None) -> list[str]:
    """Readable forms of a token sequence, one per position (repeats kept); byte_level guessed
    from the tokens when None."""
    scheme = guess_byte_level(tokens) if byte_level is None else byte_level
    return [display_token(token, scheme) for token in tokens]
