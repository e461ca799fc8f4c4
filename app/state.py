"""The model shared by every session, loaded once per process."""

from __future__ import annotations

import streamlit as st

import model

DEFAULT_MODEL = "reverse"


@st.cache_resource(show_spinner="Loading the model…")
def shared_lens(name: str) -> model.Lens:
    """One lens per model name and process; lenses keep no per-call state, so sharing is safe."""
    return model.load(name)
