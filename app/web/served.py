"""What `attnlens serve` runs: the app (main.py) as an ASGI app, with the route students' pages
follow their class by (app/teaching/follow_route.py). `streamlit run` finds `app` below and
serves it with uvicorn, as it serves main.py alone: same options, pages, components, static
files and XSRF protection, one more route."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from attnlens.app.teaching.board import shared_board
from attnlens.app.teaching.class_store import store_url
from attnlens.app.teaching.follow_route import follow_route

app = st.App(
    Path(__file__).with_name("main.py"),
    routes=[follow_route(lambda: shared_board(store_url()), st.get_option("server.baseUrlPath"))],
)
