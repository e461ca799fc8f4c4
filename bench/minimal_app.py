"""The baseline of bench/app_latency: one text box and one Plotly heatmap, nothing else."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnlens.viz.labels import position_labels

text = st.text_input("Text", value="hello world")
tokens = [*text, "</s>"]
rng = np.random.default_rng(len(text))
z = rng.random((len(tokens), len(tokens)))
labels = position_labels(tokens)
fig = go.Figure(go.Heatmap(z=z / z.sum(1, keepdims=True), x=labels, y=labels))
st.plotly_chart(fig, key="heatmap")  # a stable key, as on Explore: updated, not re-mounted
