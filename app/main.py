"""The Streamlit app: `attnlens serve` runs this script."""

from __future__ import annotations

import argparse
import sys

import streamlit as st

from app.explore import explore_page
from app.state import DEFAULT_MODEL


def _model_from_argv(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    known, _ = parser.parse_known_args(argv)
    return str(known.model)


def main() -> None:
    st.set_page_config(page_title="attnlens", layout="wide")
    if "default_model" not in st.session_state:
        st.session_state.default_model = _model_from_argv(sys.argv[1:])
    page = st.navigation([st.Page(explore_page, title="Explore", url_path="explore", default=True)])
    page.run()


main()
