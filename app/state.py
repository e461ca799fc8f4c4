"""The model shared by every session, loaded once per process, and the one this session uses."""

from __future__ import annotations

import streamlit as st

import model
from app.safe_text import md
from model.snapshots import SnapshotScore, score_snapshots, snapshots, task_of

DEFAULT_MODEL = "reverse"


@st.cache_resource(show_spinner=False, max_entries=8)
def shared_lens(name: str) -> model.Lens:
    """One lens per model name and process; lenses keep no per-call state, so sharing is safe."""
    return model.load(name)


@st.cache_data(show_spinner=False, max_entries=16)
def snapshot_scores(name: str) -> list[SnapshotScore]:
    """Every snapshot of a model of ours scored on held-out examples of its task; the same for
    every session, so computed once per process."""
    task = task_of(name)
    return [] if task is None else score_snapshots(snapshots(name), task)


def load_lens(name: str) -> model.Lens | None:
    """The lens for name, with a spinner while it loads; an error message in place if it fails."""
    try:
        with st.spinner(md(f"Loading model {name}…")):
            return shared_lens(name)
    except Exception as err:  # any failure to load is the user's to read, not a traceback
        st.error(md(f"Could not load model {name!r}: {err}"))
        return None
