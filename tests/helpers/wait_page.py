"""A page whose work takes WAIT_S for each new text, drawn through app/web/waits.py as the
app's pages draw a trace: a slot holding the body, the work shown in it while it runs. Run by
`streamlit run` in tests/app/web/browser/test_browser_waits.py."""

from __future__ import annotations

import time

import plotly.graph_objects as go
import streamlit as st

from attnlens.app.web import waits

WAIT_S = 3.0

text = st.text_input("Text", "first")
place = st.empty()


def work() -> str:
    return waits.timed("slow", len(text), lambda: time.sleep(WAIT_S) or text)


done = st.session_state.setdefault("done", {})
if text not in done:
    expected = waits.speeds().expected("slow", len(text))
    wait = waits.Wait(f"Reading {len(text)} tokens with slow", expected)
    done[text] = waits.waited(place, wait, work)
with place.container():
    st.plotly_chart(go.Figure(go.Bar(y=[1, 2]), layout={"title": {"text": f"result {text}"}}))
    st.write(f"result for {text}")
