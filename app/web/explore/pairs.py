"""A sentence pair's two texts in the figures (BertViz's sentence A / B view), for models
that read pairs: one head's attention split at the boundary, or one block of it alone."""

from __future__ import annotations

import streamlit as st

from attnlens.app.web import show, urlstate
from attnlens.app.web.downloads import figure_name
from attnlens.record.trace import Trace
from attnlens.viz.heads.segments import BLOCKS, Block, pair_heatmap, sentence_b_start

BLOCK_LABELS: dict[str, str] = {
    "all": "both sentences (split at the boundary)",
    "A→A": "sentence A → sentence A",
    "A→B": "sentence A → sentence B",
    "B→A": "sentence B → sentence A",
    "B→B": "sentence B → sentence B",
}


def pair_view(tr: Trace, layer: int, head: int) -> None:
    """Which sentence attends to which, in the layer and head picked above."""
    st.subheader("Sentence A and sentence B")
    start = sentence_b_start(tr)
    st.caption(
        f"Sentence A is positions 0–{start - 1} (segment 0), sentence B positions "
        f"{start}–{len(tr.src_tokens) - 1} (segment 1), as the model read them."
    )
    urlstate.prepare("w_pair_block", "pair_block", "all", None, BLOCKS)
    block: Block = st.selectbox(
        "Attention between the sentences", BLOCKS, key="w_pair_block",
        format_func=BLOCK_LABELS.__getitem__,
    )  # fmt: skip
    urlstate.remember("pair_block", block)
    fig = pair_heatmap(tr, layer, head, block)
    show.figure(fig, "pair_heatmap", figure_name("encoder_self", layer, head, f"pair-{block}"))
