"""What `attnlens serve` runs: the app (main.py) as an ASGI app, with the routes students' pages
use beside it: the follow route (app/classroom/follow_route.py) tells a page the class moved,
the slide route (slide_route.py) sends the slide as one payload built once for the class (the
follow route sends it too, with the version that brought it), the
answer route (answer_route.py) takes the student's answer; the page draws the slide itself; the
teach route (teach_route.py) makes a browser a class's teacher with a one-time code.
`streamlit run` finds `app` below and serves it with uvicorn, as it serves main.py alone: same
options, pages, components, static files and XSRF protection, five more routes; and a
connection that sends no request within a few seconds is closed (app/server/connections.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import streamlit as st

from attnlens.app.classroom.answer_route import answer_route
from attnlens.app.classroom.board import VersionBoard, shared_board
from attnlens.app.classroom.follow_route import follow_route, left_route
from attnlens.app.classroom.limits import ClassError
from attnlens.app.classroom.slide_route import Slides, slide_route
from attnlens.app.classroom.stores import open_store, store_url
from attnlens.app.classroom.teach_route import teach_route
from attnlens.app.server.connections import close_idle_connections
from attnlens.app.web.lecture.resources import this_store
from attnlens.app.web.lecture.slide_payload import slide_payload


def board() -> VersionBoard:
    return shared_board(store_url())


@contextlib.asynccontextmanager
async def store_opened(_: object) -> AsyncIterator[None]:
    """The class store opened as the server starts, not at the first request: a file deleted
    before then would take its classes with it (no process holding them), after it the open
    connection still reads every class the file held, and writes them back (docs/teaching.md)."""
    with contextlib.suppress(ClassError):  # not reachable now: the first request tries again
        await asyncio.to_thread(open_store, store_url())
    yield


close_idle_connections()
base = st.get_option("server.baseUrlPath")
slides = Slides(slide_payload)  # one cache of payloads for both routes that send them
app = st.App(
    Path(__file__).with_name("main.py"),
    lifespan=store_opened,
    routes=[
        follow_route(board, base, slide=slides.quietly),
        slide_route(board, slides, base),
        answer_route(this_store, base),
        left_route(board, base),
        teach_route(this_store, base),
    ],
)
