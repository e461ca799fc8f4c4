"""The Streamlit app: `attnlens serve` runs this script. Small pages over model/ and viz/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import streamlit as st

from attnlens.app.web import urlstate
from attnlens.app.web.resources import DEFAULT_MODEL

# A folder per page, its script page.py beside the page's own parts. No folder here is named
# "pages": Streamlit would also list such a folder as pages of its own, and a link with a path
# (/decode?model=sort) would run that file bare, without this navigation.
HERE = Path(__file__).parent
PAGES = (  # (folder, title, url path)
    ("explore", "Explore", "explore"),
    ("decode", "Decode", "decode"),
    ("inside", "Inside the Transformer", "inside"),
    ("heads", "Heads", "heads"),
    ("experiments", "Experiments", "experiments"),
    ("training", "Training", "training"),
    ("lecture", "Lecture", "lecture"),
)


def _model_from_argv(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    known, _ = parser.parse_known_args(argv)
    return str(known.model)


def _pages() -> list[st.Page]:
    """Every page; the one a shared link names with ?page= opens first (a student's join
    link, ?class=CODE, opens the lecture; the Lessons page of old links is the lecture now)."""
    wanted = urlstate.remembered("page", "explore", str)
    if wanted == "lessons" or "class" in st.query_params:
        wanted = "lecture"
    if wanted not in {url for _, _, url in PAGES}:
        wanted = "explore"
    return [
        st.Page(HERE / folder / "page.py", title=title, url_path=url, default=url == wanted)
        for folder, title, url in PAGES
    ]


def main() -> None:
    st.set_page_config(page_title="attnlens", layout="wide")
    if "default_model" not in st.session_state:
        st.session_state.default_model = _model_from_argv(sys.argv[1:])
    urlstate.seed_from_url()
    page = st.navigation(_pages())  # each page draws the sidebar itself (app.frame)
    page.run()


main()
