"""Explore: type text, pick a kind, layer and head, and see where that head looks."""

from __future__ import annotations

import streamlit as st

import model
import viz
from app.state import DEFAULT_MODEL, shared_lens
from model.trace import Kind, Trace

KIND_LABELS: dict[Kind, str] = {
    "encoder_self": "encoder self",
    "decoder_self": "decoder self",
    "cross": "cross",
}


def explore_page() -> None:
    st.title("attnlens · Explore")
    name = st.sidebar.text_input(
        "Model", value=st.session_state.get("default_model", DEFAULT_MODEL), key="model"
    )
    try:
        lens = shared_lens(name)
    except (ValueError, OSError) as err:
        st.error(f"Could not load model {name!r}: {err}")
        return
    st.caption(lens.description)
    text = st.text_input("Text", value="hello world", max_chars=lens.max_tokens, key="text")
    target = st.text_input("Target (optional, teacher forcing)", value="", key="target")
    try:
        tr = lens.trace(text, target=target or None)
    except model.InputError as err:
        st.error(str(err))
        return
    for warning in tr.warnings:
        st.warning(warning)
    st.text("Output: " + "".join(tr.tgt_tokens[1:]))
    head_view(tr)


@st.fragment
def head_view(tr: Trace) -> None:
    """Re-runs alone when a control inside it moves; the model is not run again."""
    cols = st.columns(3)
    kind = cols[0].selectbox(
        "Attention", tr.kinds, index=len(tr.kinds) - 1, format_func=KIND_LABELS.get
    )
    layer = cols[1].number_input("Layer", 0, tr.model.n_layers - 1, tr.model.n_layers - 1)
    head = cols[2].number_input("Head", 0, tr.model.n_heads - 1, 0)
    st.plotly_chart(viz.head_heatmap(tr, kind, int(layer), int(head)), width="stretch")
