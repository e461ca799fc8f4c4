"""What every page starts with: its place in the URL, the sidebar, its title and the model."""

from __future__ import annotations

import streamlit as st

import model
from app import urlstate
from app.sidebar import sidebar
from app.state import load_lens


def page_start(url_path: str, title: str) -> model.Lens | None:
    """Draw the shared sidebar and the title; the session's lens, or None with a message."""
    urlstate.remember("page", url_path)
    name = sidebar(st.session_state.get("default_model", ""))
    st.title(title)
    if not name:
        st.info("Pick a model in the sidebar, or type a folder or hub id.")
        return None
    return load_lens(name)
