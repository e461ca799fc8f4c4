"""Text that may hold user or token characters, made safe for Streamlit's Markdown elements.

st.error, st.warning, st.info, st.success, st.caption and st.spinner render Markdown; a
message that quotes the user's text ("'*_<b>' is outside the vocabulary") must show those
characters as they are, so every Markdown-significant character is backslash-escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

WORD_JOINER = "\u2060"  # zero width, no break: keeps ':name:' from reading as a shortcode
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=\"'])")


def md(text: object) -> str:
    """`text` as literal Markdown: every punctuation character Markdown might act on escaped,
    newlines kept as line breaks. Streamlit reads `:name:` shortcodes (`:material/warning:`,
    `:streamlit:`) after unescaping, so an invisible word joiner follows each colon."""
    escaped = _SPECIAL.sub(r"\\\1", str(text))
    return escaped.replace("\\:", "\\:" + WORD_JOINER).replace("\n", "  \n")


def md_items(items: Sequence[object]) -> str:
    """Several messages as one block of literal Markdown: one line alone, several as a list,
    so that one warning box holds them all (three boxes stacked pushed the figure down)."""
    shown = [md(item) for item in dict.fromkeys(str(i) for i in items)]
    if len(shown) == 1:
        return shown[0]
    return "\n".join(f"- {line}" for line in shown)
