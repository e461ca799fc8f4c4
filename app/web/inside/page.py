"""Inside the Transformer: positional encodings, masks, and one head's attention in numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attnlens import viz
from attnlens.app.web import show
from attnlens.app.web.downloads import figure_name
from attnlens.app.web.pickers import kind_picker, layer_head_pickers
from attnlens.app.web.safe_text import md
from attnlens.app.web.scaffold import Started, traced_page
from attnlens.model.lenses.lens import Lens
from attnlens.record.trace import Trace
from attnlens.viz.lecture.positional_view import positional_scheme_text
from attnlens.viz.lecture.sdpa_steps import (
    STEP_TITLES,
    attention_steps,
    largest_difference,
    step_figure,
)
from attnlens.viz.shared.labels import visible


def page() -> None:
    # a long input as Explore keeps it (what each head was computed from, past the budget):
    # the positions and the masks draw from it, where the whole weights were refused
    traced_page("inside", "Inside the Transformer", traced_view, record="auto")


def traced_view(started: Started) -> None:
    lens, tr = started.lens, started.trace
    positional(tr)
    sdpa(lens, tr)


def positional(tr: Trace) -> None:
    """What the model has to tell positions apart, and its table when it adds one (§3.5)."""
    st.header("Positional information (§3.5)")
    st.caption(
        md(f"Attention alone ignores order. {tr.model.name} has {positional_scheme_text(tr)}.")
    )
    try:
        fig = viz.positional_view(tr)
    except ValueError as err:
        st.info(md(err))
        return
    show.figure(fig, "positional", "positional-encoding")


@st.fragment
def sdpa(lens: Lens, tr: Trace) -> None:
    """Masks and the five steps of scaled dot-product attention for one head."""
    cols = st.columns(3)
    kind = kind_picker(tr, cols[0])
    layer, head = layer_head_pickers(*tr.model.shape(kind), (cols[1], cols[2]))
    st.header("Masks for this input (§3.2.3)")
    show.figure(viz.masks_view(tr, kind), "masks", f"{kind}-masks")
    st.header(f"Scaled dot-product attention, layer {layer} head {head} (§3.2.1)")
    projections = lens.capabilities.projections
    if projections is None:
        why = lens.capabilities.reason("projections")
        st.info(md(f"{why[:1].upper()}{why[1:]}."))
        return
    proj = projections.head_projections(tr, kind, layer, head)
    steps = attention_steps(proj.q, proj.k, proj.v, proj.mask)
    recorded = tr.attention(kind)
    assert recorded is not None
    diff = largest_difference(steps, recorded[layer, head])
    st.caption(
        f"d_k = {steps.d_k}, √d_k = {steps.d_k**0.5:.3f}. The softmax below matches the "
        f"attention the model recorded to within {diff:.1e}."
    )
    q_tokens, k_tokens = tr.tokens(kind)
    _matrices(proj.q, proj.k, proj.v, q_tokens, k_tokens)
    tabs = st.tabs(list(STEP_TITLES.values()))
    for tab, step in zip(tabs, STEP_TITLES, strict=True):
        with tab:
            fig = step_figure(steps, step, q_tokens, k_tokens)
            show.figure(fig, f"sdpa_{step}", figure_name(kind, layer, head, f"sdpa-{step}"))


def _matrices(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    q_tokens: tuple[str, ...],
    k_tokens: tuple[str, ...],
) -> None:
    """Q, K and V as tables, one row per position, so every number can be read."""
    with st.expander("Q, K and V of this head (rows = positions)"):
        for name, m, tokens in (("Q", q, q_tokens), ("K", k, k_tokens), ("V", v, k_tokens)):
            st.text(name)
            index = [f"{i} · {visible(t)}" for i, t in enumerate(tokens)]
            st.dataframe(pd.DataFrame(m, index=index).round(4), width="stretch")


page()
