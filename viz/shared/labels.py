"""Token labels for figures: every position its own label, token text kept as text, not markup.

A token has two forms: the raw token the model read (`##ization`, `Ġthe`) and the form a person
reads (`ization`, ` the`; Trace.shown). Axes draw the readable form; the raw token follows it in
the hover wherever the two differ. Long inputs keep one category per position (the hover names
every token) but label only every k-th tick.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_TICKS = 30  # labelled ticks per axis at most; the rest of the positions answer on hover


def escape(text: str) -> str:
    """Plotly renders labels and hover text as a subset of HTML, so '&', '<', '>' are escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def visible(token: str) -> str:
    """A token as a reader should see it: blank tokens as '␣' per space, control characters
    escaped."""
    if token and not token.strip(" "):
        return "␣" * len(token)
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in token)


def token_text(token: str) -> str:
    """A token made visible and safe to put in a figure."""
    return escape(visible(token))


def wrapped(words: str, width: int) -> str:
    """Words broken into lines of at most `width` characters where they can be (Plotly's
    "<br>"; a longer word keeps its own line): a label stays inside its block or panel when
    the figure is narrow (the Lecture's column at 1400 px)."""
    lines: list[str] = []
    for word in words.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def position_labels(tokens: Sequence[str]) -> list[str]:
    """'3 · h' style labels, unique per position even when tokens repeat; safe as figure text."""
    return [f"{i} · {token_text(tok)}" for i, tok in enumerate(tokens)]


def hover_labels(raw: Sequence[str], shown: Sequence[str] | None = None) -> list[str]:
    """One label per position naming its token as read, and the raw token where it differs:
    '3 · ization (token ##ization)'. Equal to position_labels(raw) when nothing differs."""
    if shown is None:
        shown = raw
    return [
        f"{i} · {token_text(s)}" + ("" if s == r else f" (token {token_text(r)})")
        for i, (r, s) in enumerate(zip(raw, shown, strict=True))
    ]


def produced_labels(
    raw: Sequence[str], shown: Sequence[str] | None = None, end: str = "end"
) -> list[str]:
    """'i · input → produced' per decoder position (position i reads token i and produces
    token i + 1; the last produces the end); raw tokens follow where they differ."""
    shown = raw if shown is None else shown
    out_raw, out_shown = [*raw[1:], end], [*shown[1:], end]
    labels = []
    for i, (r, s, ro, so) in enumerate(zip(raw, shown, out_raw, out_shown, strict=True)):
        label = f"{i} · {token_text(s)} → {token_text(so)}"
        if (r, ro) != (s, so):
            label += f" (tokens {token_text(r)} → {token_text(ro)})"
        labels.append(label)
    return labels


@dataclass(frozen=True)
class TokenAxis:
    """A category axis over positions: `values` name every position (hover shows them);
    `ticks` label at most `limit` of them, with the readable token."""

    values: list[str]
    ticks: dict[str, Any] = field(default_factory=dict)


def token_axis(
    values: list[str], texts: list[str] | None = None, limit: int = MAX_TICKS
) -> TokenAxis:
    """Ticks for one category value per position: every one when they fit, else every k-th,
    drawn with `texts` (default: the values themselves)."""
    texts = values if texts is None else texts
    step = max(1, math.ceil(len(values) / max(1, limit)))
    if step == 1 and texts == values:
        return TokenAxis(values)
    return TokenAxis(
        values, {"tickmode": "array", "tickvals": values[::step], "ticktext": texts[::step]}
    )


def positions_axis(
    raw: Sequence[str], shown: Sequence[str] | None = None, limit: int = MAX_TICKS
) -> TokenAxis:
    """The axis of one token sequence: hover names each token, ticks show the readable form."""
    ticks = position_labels(raw if shown is None else shown)
    return token_axis(hover_labels(raw, shown), ticks, limit)
