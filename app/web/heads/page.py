"""Heads: what every head tends to do (statistics and tags), and rollout / flow across layers."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnlens import analysis, viz
from attnlens.analysis.head_stats import COLUMNS, NORM_SHARES
from attnlens.app.web import show, urlstate
from attnlens.app.web.experiments.sections import induction_figures, induction_section
from attnlens.app.web.pickers import KIND_LABELS, kind_picker, memo
from attnlens.app.web.safe_text import md
from attnlens.app.web.scaffold import Started, traced_page, true_alignment
from attnlens.record.trace import Trace
from attnlens.viz.measures.rollout_view import Method

METRICS = COLUMNS[3:-1]  # the numeric statistics, in the table's order
METHODS: tuple[Method, ...] = ("rollout", "flow")


def page() -> None:
    traced_page("heads", "Heads", traced_view, record="auto")  # long: from the summaries


def traced_view(started: Started) -> None:
    tr = started.trace
    st.header("Statistics and tags")
    alignment = true_alignment(started)
    stats = stats_of(tr, alignment)
    st.caption(
        "Entropy in nats (low = focused), mean distance |query − key|, and the share of weight "
        "on the query's own position, the previous one, the first one and the end token; "
        "induction: on the token after the earlier occurrence of the query's own token (type "
        "a text twice), shown once at least 4 tokens have one. first_norm and special_norm: "
        "the share of what the head wrote, Σ αᵢⱼ ‖f(xⱼ)‖, that came from the first token and "
        "from the special tokens ([CLS], [SEP], <s>, </s>), beside special, their share of "
        "weight: a sink head takes weight and gives little (a record without norms, or a long "
        "one recorded before attnlens kept these, leaves them empty)."
        + (
            " Aligned: the share of output tokens whose cross-attention argmax is their true "
            "source (known from the task); 80% or more tags an alignment head."
            if alignment is not None
            else ""
        )
    )
    if show.presenting():  # at projector size the fifteen columns run past the page: the
        carried = ["kind", "layer", "head", *NORM_SHARES]  # norm shares a table of their own
        show.table(stats.drop(columns=list(NORM_SHARES)), "head_stats", "head-statistics",
                   wide=("tag",))  # fmt: skip
        show.table(stats[carried], "head_norm_shares", "head-norm-shares")
    else:
        show.table(stats, "head_stats", "head-statistics", wide=("tag",))
    charts = st.container()  # filled once the induction run's progress line is sent: the
    induction = induction_section(started.lens)  # browser's first Plotly figure costs it
    with charts:  # seconds, and a bar sent after one waited for it (issue 49)
        heads_charts(tr, alignment)
    if induction is not None:
        induction_figures(started.lens, induction, tr, "heads_induction")


def stats_of(tr: Trace, alignment: tuple[int, ...] | None = None) -> pd.DataFrame:
    """The statistics table of this trace, computed once per trace and session."""
    key = (st.session_state.get("_model"), tr.src_tokens, tr.tgt_tokens, alignment)
    return memo("head_stats", key, lambda: analysis.head_statistics(tr, reference=alignment))


@st.fragment
def heads_charts(tr: Trace, alignment: tuple[int, ...] | None = None) -> None:
    cols = st.columns(2)
    kind = kind_picker(tr, cols[0])
    stats = stats_of(tr, alignment)
    shown = stats[stats["kind"] == kind]
    metrics = [m for m in METRICS if shown[m].notna().any()]  # e.g. no "aligned" without a task
    urlstate.prepare("w_metric", "metric", metrics[0], str, metrics)
    metric = cols[1].selectbox("Statistic", metrics, key="w_metric")
    urlstate.remember("metric", metric)
    show.figure(viz.head_stats_chart(stats, kind, metric), "stats_chart", f"{kind}-{metric}")
    st.header("Rollout and flow across layers")
    self_kinds = [k for k in tr.kinds if k != "cross"]
    if not self_kinds:
        st.info("Rollout and flow follow self-attention; this record has none.")
        return
    c = st.columns(3)
    flow_kind = c[0].selectbox(
        "Self-attention", self_kinds, key="w_flow_kind", format_func=KIND_LABELS.__getitem__
    )
    method: Method = c[1].radio("Method", METHODS, key="w_method", horizontal=True) or "rollout"
    layers = list(range(tr.model.shape(flow_kind)[0]))
    if st.session_state.get("w_flow_layer") not in layers:  # held from a deeper stack
        st.session_state.pop("w_flow_layer", None)
    layer = c[2].selectbox("After layer", layers, index=len(layers) - 1, key="w_flow_layer")
    try:
        fig = viz.rollout_view(tr, flow_kind, method, layer)
    except ValueError as err:
        st.info(md(err))
        return
    show.figure(fig, "rollout", f"{flow_kind}-layer{layer}-{method}")


page()
