"""One line under each page's title that says what the page is for and where to start: a
newcomer opening the app learns what they look at; a returning user reads past one line. Not on
a projector, where the teacher says it."""

from __future__ import annotations

import streamlit as st

from attnlens.app.web.safe_text import md
from attnlens.app.web.show import presenting

GUIDES = {
    "explore": "Type a sentence: every heatmap is one head, each row a position reading the "
    "sequence, each column a position it may read; darker is more weight. Click a thumbnail to "
    "enlarge it.",
    "decode": "Watch the model write its answer one token at a time: pick greedy, beam or "
    "sampling, then step through to see which input each new token looked at.",
    "inside": "The machinery of §3 for your text: where positions come from, which positions "
    "the masks hide, and one head's attention worked through in numbers.",
    "heads": "What each head does, measured: its statistics and tags (previous token, first "
    "token, broad…), then how attention flows through the layers.",
    "experiments": "Ask the heads a question with many inputs: which heads copy, which matter "
    "to the output, which align with the truth. Pick one, read its definition, press Run.",
    "training": "One head of a bundled model, snapshot by snapshot: slide through training and "
    "watch its pattern form beside the finished model's.",
}


def guide(url_path: str) -> None:
    """The page's one line of guidance (none in presentation mode, or for a page without one)."""
    line = GUIDES.get(url_path)
    if line and not presenting():
        st.caption(md(line))  # our own words, escaped like every other
