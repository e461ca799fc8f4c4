"""The models shared by every session, loaded once per process, and the one this session uses."""

from __future__ import annotations

import streamlit as st

import attnlens
from attnlens.app.safe_text import md
from attnlens.model.lenses.registry import check_allowed
from attnlens.model.training.snapshots import SnapshotScore

DEFAULT_MODEL = "reverse"


@st.cache_resource(show_spinner=False, max_entries=8)
def shared_lens(name: str) -> attnlens.Lens:
    """One lens per model name and process; lenses keep no per-call state, so sharing is safe."""
    return attnlens.load(name)


@st.cache_resource(show_spinner=False, max_entries=16)
def shared_snapshot(name: str, step: int) -> attnlens.Lens:
    """A model's training snapshot, loaded through the model (never by a path a user gives)."""
    return shared_lens(name).snapshot(step)


@st.cache_data(show_spinner=False, max_entries=16)
def snapshot_scores(name: str) -> list[SnapshotScore]:
    """Every snapshot of a model of ours scored on held-out examples of its task; the same for
    every session, so computed once per process."""
    return shared_lens(name).snapshot_scores()


def load_lens(name: str) -> attnlens.Lens | None:
    """The lens for name, with a spinner while it loads; an error message in place if it fails."""
    return _loaded(lambda: _allowed_lens(name), name)


def _allowed_lens(name: str) -> attnlens.Lens:
    """The shared lens, once this deployment allows the name (the cache alone would hand out a
    model loaded before the policy changed)."""
    check_allowed(name)
    return shared_lens(name)


def load_snapshot(name: str, step: int) -> attnlens.Lens | None:
    """A snapshot of the model, like load_lens."""
    return _loaded(lambda: shared_snapshot(name, step), f"{name} at step {step}")


def _loaded(load: object, shown: str) -> attnlens.Lens | None:
    try:
        with st.spinner(md(f"Loading model {shown}…")):
            return load()  # type: ignore[operator,no-any-return]
    except Exception as err:  # any failure to load is the user's to read, not a traceback
        st.error(md(f"Could not load model {shown!r}: {err}"))
        return None
