"""The view in the URL: st.query_params seeds a session once, then follows every control.

A value lives in st.session_state under "_" + name (widget state is dropped when a page
stops drawing its widget, so the copy keeps it across pages) and in the URL under name. Lists
(ablated heads, forced tokens) are repeated URL parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from attnlens.model.decoding.request import knobs

VIEW_KEYS = (
    "model", "text", "target", "page", "kind", "layer", "head", "step", "snapshot", "lesson",
    "present", "metric", "pair", "pair_block", "experiment", "follow", "view",
    "vs_layer", "vs_head", "measure",
)  # fmt: skip
LIST_KEYS = ("force", "ablate")
URL_KEYS = (*VIEW_KEYS, *(k for k in knobs() if k != "generation_config"))
T = TypeVar("T")


def seed_from_url() -> None:
    """On a session's first run, copy the shared link's parameters into the session."""
    if st.session_state.get("_url_seeded"):
        return
    st.session_state["_url_seeded"] = True
    for name in URL_KEYS:
        if name in st.query_params:
            many = name in LIST_KEYS
            value = st.query_params.get_all(name) if many else st.query_params[name]
            st.session_state["_" + name] = value


def remembered(name: str, default: T, cast: Callable[[Any], T] | None = None) -> T:
    """The value the session (or the link that opened it) holds for name, else default."""
    value = st.session_state.get("_" + name, default)
    try:
        return cast(value) if cast is not None else value  # type: ignore[no-any-return]
    except (TypeError, ValueError):
        return default


def prepare(
    widget_key: str,
    name: str,
    default: T,
    cast: Callable[[Any], T] | None = None,
    options: Sequence[T] | None = None,
) -> None:
    """Give a widget its remembered value before it is drawn, falling back to default when
    the value does not fit (a bad link, or a layer the newly picked model lacks)."""
    value = st.session_state.get(widget_key, None)
    if value is None:
        value = remembered(name, default, cast)
    if options is not None and value not in options:
        value = default
    st.session_state[widget_key] = value


def remember(name: str, value: object) -> None:
    """Keep a control's value for other pages and put it in the URL."""
    st.session_state["_" + name] = value
    if isinstance(value, list):
        texts = [str(v) for v in value]
        if st.query_params.get_all(name) != texts:
            st.query_params[name] = texts
        return
    text = str(value)
    if st.query_params.get(name) != text:
        st.query_params[name] = text


def forget(name: str) -> None:
    """Drop a value from the URL (an empty target, say)."""
    st.session_state.pop("_" + name, None)
    if name in st.query_params:
        del st.query_params[name]


def flag(value: object) -> bool:
    """A yes/no setting from the URL ("1", "true", "on") or from a widget (a bool)."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
