"""What `attnlens serve` runs: the app (main.py) as an ASGI app, with the routes students' pages
use beside it: the follow route (app/teaching/follow_route.py) tells a page the class moved,
the slide route (slide_route.py) sends the slide as one payload built once for the class (the
follow route sends it too, with the version that brought it), the
answer route (answer_route.py) takes the student's answer; the page draws the slide itself.
`streamlit run` finds `app` below and serves it with uvicorn, as it serves main.py alone: same
options, pages, components, static files and XSRF protection, three more routes."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from attnlens.app.teaching.answer_route import answer_route
from attnlens.app.teaching.board import VersionBoard, shared_board
from attnlens.app.teaching.class_store import store_url
from attnlens.app.teaching.follow_route import follow_route
from attnlens.app.teaching.slide_route import Slides, slide_route
from attnlens.app.web.lecture.resources import this_store
from attnlens.app.web.lecture.slide_payload import slide_payload


def board() -> VersionBoard:
    return shared_board(store_url())


base = st.get_option("server.baseUrlPath")
slides = Slides(slide_payload)  # one cache of payloads for both routes that send them
app = st.App(
    Path(__file__).with_name("main.py"),
    routes=[
        follow_route(board, base, slide=slides.quietly),
        slide_route(board, slides, base),
        answer_route(this_store, base),
    ],
)
