"""The reference of every latency target: the bare Streamlit page.

One `st.text_input` and one `go.Heatmap`, nothing else. The URL picks the variant a target is
measured against, so that both sides of a ratio have the same kind of control:

- `?live=1`: the text box commits as you type (after the same 0.3 s pause as attnlens's);
- `?control=select`: a "Head" select box above the heatmap (the title names the head);
- `?control=slider`: a "Step" slider above the heatmap (the title names the step);
- `?frame=1`: the same page inside the frame every attnlens page has, with no model and no
  other figure: the page configuration, the navigation between seven pages, the sidebar's
  model picker, toggle and caption, a title with a caption, then in a fragment as on Explore
  the text box, a row of three pickers (the control one of them) and two columns. It is not
  a target's reference: the bench prints it beside them, to tell what Streamlit's own frame
  costs from what attnlens's work costs.

The heatmap is as large as the text: one row and column per character and one for `</s>`.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnlens.viz.shared.labels import position_labels

LIVE = "300ms"  # as attnlens.app.web.pickers.LIVE
PAGES = ("Explore", "Decode", "Inside the Transformer", "Heads", "Experiments", "Training",
         "Lecture")  # fmt: skip

live = st.query_params.get("live") == "1"
control = st.query_params.get("control", "")
framed = st.query_params.get("frame") == "1"


def heatmap(text: str, title: str) -> go.Figure:
    tokens = [*text, "</s>"]
    rng = np.random.default_rng([len(text), zlib.crc32(title.encode())])
    z = rng.random((len(tokens), len(tokens)))
    labels = position_labels(tokens)
    fig = go.Figure(go.Heatmap(z=z / z.sum(1, keepdims=True), x=labels, y=labels))
    fig.update_layout(title=title)
    return fig


def text_box() -> str:
    return str(st.text_input("Text", value="hello world", live=LIVE if live else False))


def controlled(title: str, row: Any = st) -> str:
    """The URL's control drawn (a select box in `row`, or a slider), and the title naming its
    value; `title` when there is none."""
    if control == "select":
        return f"layer 0 · head {row.selectbox('Head', list(range(12)))}"
    if control == "slider":
        return f"step {st.slider('Step', 0, 30, 0)} · bare page"
    return title


def bare() -> None:
    text = text_box()
    st.plotly_chart(heatmap(text, controlled("bare page")), key="heatmap")  # stable, as Explore's


@st.fragment
def framed_figure() -> None:
    text = text_box()
    row = st.container(horizontal=True)
    kind = row.selectbox("Kind", ["encoder self", "decoder self", "cross"])
    layer = row.selectbox("Layer", list(range(6)))
    if control != "select":
        row.selectbox("Head", list(range(8)))
    title = controlled(f"{kind} · layer {layer} · bare page", row)
    left, right = st.columns([3, 2])
    left.plotly_chart(heatmap(text, title), key="heatmap")
    right.caption("no second figure")


def in_frame() -> None:
    st.sidebar.selectbox("Model", ["reverse", "translate", "minilm"])
    st.sidebar.toggle("Presentation (large fonts)")
    st.sidebar.caption("Light or dark: ⋮ menu (top right).")
    st.title("Bare page")
    st.caption("The bare page inside attnlens's frame.")
    framed_figure()


if framed:
    st.set_page_config(page_title="bare", layout="wide")
    pages = [st.Page(in_frame, title=PAGES[0], url_path="framed", default=True)]
    pages += [st.Page(lambda: None, title=t, url_path=f"page{i}") for i, t in enumerate(PAGES[1:])]
    st.navigation(pages).run()
else:
    bare()
