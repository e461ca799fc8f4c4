"""Token labels for axes: every position its own label, token text kept as text."""

from __future__ import annotations

from collections.abc import Sequence


def position_labels(tokens: Sequence[str]) -> list[str]:
    """'3 · h' style labels, unique per position even when tokens repeat; spaces made visible."""
    return [f"{i} · {visible(tok)}" for i, tok in enumerate(tokens)]


def visible(token: str) -> str:
    """A token as a reader should see it: a space shown as '␣', control characters escaped."""
    if token == " ":
        return "␣"
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in token)
