"""Token labels for figures: every position its own label, token text kept as text, not markup."""

from __future__ import annotations

from collections.abc import Sequence


def escape(text: str) -> str:
    """Plotly renders labels and hover text as a subset of HTML, so '&', '<', '>' are escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def visible(token: str) -> str:
    """A token as a reader should see it: a space shown as '␣', control characters escaped."""
    if token == " ":
        return "␣"
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in token)


def token_text(token: str) -> str:
    """A token made visible and safe to put in a figure."""
    return escape(visible(token))


def position_labels(tokens: Sequence[str]) -> list[str]:
    """'3 · h' style labels, unique per position even when tokens repeat; safe as figure text."""
    return [f"{i} · {token_text(tok)}" for i, tok in enumerate(tokens)]
