"""The reference of every latency target: the bare Streamlit page.

One `st.text_input` and one `go.Heatmap`, nothing else. The URL picks the variant a target is
measured against, so that both sides of a ratio have the same kind of control:

- `?live=1`: the text box commits as you type (after the same 0.3 s pause as attnlens's);
- `?control=select`: a "Head" select box above the heatmap (the title names the head);
- `?control=slider`: a "Step" slider above the heatmap (the title names the step).

The heatmap is as large as the text: one row and column per character and one for `</s>`.
"""

from __future__ import annotations

import zlib

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnlens.viz.labels import position_labels

LIVE = "300ms"  # as attnlens.app.inputs.LIVE

live = st.query_params.get("live") == "1"
control = st.query_params.get("control", "")
text = st.text_input("Text", value="hello world", live=LIVE if live else False)
title = "bare page"
if control == "select":
    title = f"layer 0 · head {st.selectbox('Head', list(range(12)))}"
elif control == "slider":
    title = f"step {st.slider('Step', 0, 30, 0)} · bare page"
tokens = [*text, "</s>"]
rng = np.random.default_rng([len(text), zlib.crc32(title.encode())])
z = rng.random((len(tokens), len(tokens)))
labels = position_labels(tokens)
fig = go.Figure(go.Heatmap(z=z / z.sum(1, keepdims=True), x=labels, y=labels))
fig.update_layout(title=title)
st.plotly_chart(fig, key="heatmap")  # a stable key, as on Explore
