"""A notebook's compact summary of a record: a small table of escaped text."""

from __future__ import annotations

import html

from attnlens.record.kinds import ModelInfo

HTML_ITEMS = 24  # a notebook summary lists at most this many tokens (or warnings)
HTML_CHARS = 1200  # ... and this many characters of one value
TOKEN_CHARS = 40  # ... and of one token


def model_line(model: ModelInfo) -> str:
    """name (architecture, L layers × H heads, d_model)"""
    return (f"{model.name} ({model.architecture}, {model.n_layers} layers × {model.n_heads} "
            f"heads, d_model {model.d_model})")  # fmt: skip


def token_line(tokens: tuple[str, ...]) -> str:
    """The first HTML_ITEMS tokens, space-separated (a blank token as ␣), then how many more."""
    shown = " ".join(_short(t) if t.strip() else "␣" for t in tokens[:HTML_ITEMS])
    more = len(tokens) - HTML_ITEMS
    return f"{shown} … ({more} more, {len(tokens)} in all)" if more > 0 else shown


def html_table(title: str, rows: list[tuple[str, str]]) -> str:
    """A small two-column table; every value escaped (tokens and names are text, not markup)."""
    cells = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{html.escape(_cut(v))}</td></tr>"
        for k, v in rows
    )
    return f"<div><strong>{html.escape(title)}</strong><table>{cells}</table></div>"


def _cut(text: str, limit: int = HTML_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _short(token: str) -> str:
    return _cut(token, TOKEN_CHARS)
