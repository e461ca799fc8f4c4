"""The sidebar every page shares: which model, and how the app is shown."""

from __future__ import annotations

import streamlit as st

import attnlens
from attnlens.app.web import urlstate
from attnlens.app.web.resources import DEFAULT_MODEL

OTHER = "Other: a local folder or hub id"
LARGE_FONT_CSS = """<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 22px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stText"], label, input, textarea
  { font-size: 1.3rem !important; }
[data-testid="stCaptionContainer"] p { font-size: 1.05rem !important; }
h1 { font-size: 2.4rem !important; } h2 { font-size: 2rem !important; }
[data-testid="stTable"] th, [data-testid="stTable"] td
  { font-size: 1.2rem !important; padding: .25rem .3rem !important; }
[data-testid="stMainBlockContainer"] { padding-top: 2.5rem !important; }
[data-testid="stSidebarNavLink"] .stMarkdownEllipsis,
[data-testid="stSidebarNavLink"] .stMarkdownEllipsis p
  { white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
</style>"""  # projector: large text, page names whole (wrapped), the figure high on the page;
# a table's cells padded less: Heads' 12 columns at 1920 px ran 42 px past the page, the tags cut
# every page: a text box of the last run never stays on screen greyed out beside the new one
# (a text grown past 200 characters swaps its one-line box for a box of several lines, and the
# old box stayed under the new one, greyed, until the new input's page was drawn). A box the
# user is typing in is never hidden while its run is under way: a focused input that is
# display: none loses the focus, and the next keys went nowhere. The swapped-out box (it held
# the focus) is hidden once its successor, under the same key, is drawn before it.
PAGE_CSS = """<style>
[data-stale="true"]:has([data-testid="stTextInput"], [data-testid="stTextArea"]):not(:focus-within),
.st-key-w_text[data-stale="false"] ~ .st-key-w_text[data-stale="true"]
  { display: none; }
</style>"""
THEME_HINT = "Light or dark: ⋮ menu (top right) → System, Light or Dark. Figures follow it."


def bundled_names() -> list[str]:
    """Models that load by name (bundled ones, and packaged ones the registry lists)."""
    try:
        return [entry.name for entry in attnlens.bundled_models()]
    except OSError:
        return []


def model_picker(initial: str) -> str:
    """A bundled model from a list, or any folder or hub id typed in; remembered in the URL."""
    names = bundled_names()
    chosen = urlstate.remembered("model", initial, str) or DEFAULT_MODEL
    urlstate.prepare("w_model_choice", "model_choice", chosen if chosen in names else OTHER)
    choice = st.sidebar.selectbox("Model", [*names, OTHER], key="w_model_choice")
    if choice != OTHER:
        name = str(choice)
    else:
        urlstate.prepare("w_model_path", "model", chosen if chosen not in names else "")
        name = st.sidebar.text_input(
            "Folder or hub id", key="w_model_path", help="A folder holding a model, or owner/name"
        ).strip()
    urlstate.remember("model_choice", choice)
    if name:
        urlstate.remember("model", name)
    return name


def presentation_toggle() -> bool:
    """Large fonts for a projector, in the page and in every figure."""
    urlstate.prepare("w_present", "present", False, urlstate.flag)
    on = bool(st.sidebar.toggle("Presentation (large fonts)", key="w_present"))
    if on:
        urlstate.remember("present", 1)
    else:
        urlstate.forget("present")
    st.session_state["_present"] = on
    if on:
        st.html(LARGE_FONT_CSS)  # fixed CSS, never user text
    return on


def sidebar(initial: str) -> str:
    """Draw the sidebar; returns the model name this session uses."""
    st.html(PAGE_CSS)  # fixed CSS, never user text
    name = model_picker(initial)
    presentation_toggle()
    st.sidebar.caption(THEME_HINT)
    return name
