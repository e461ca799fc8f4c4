"""A student's page of a live class as the server sees it, with no browser: the page over
Streamlit's websocket (bench/session.py), the follow component's request to the follow route
held as the component holds it, and the page's own timers (any fragment that reruns on its own),
so that hundreds of students fit in one Python process beside the server.

What the browser does and this client does too: open the join link (the page's first run
whole); hold GET /_attnlens/follow/CODE?after=V (board.py's FOLLOW_HTML); when it brings a new
version, send it as the component's value (a rerun, as the component's setComponentValue does)
and wait for the page to be drawn; rerun each auto-rerun fragment at its interval; tap an answer
button. What it leaves out is drawing, which happens on each student's own device.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attnlens.app.teaching.board import FOLLOW_PATH
from bench.session import Session

FOLLOW_COMPONENT = "attnlens_follow"


@dataclass
class Page(Session):
    """A page of the app that keeps what a browser keeps to act on it later: its buttons, the
    follow component and the fragments that rerun on their own."""

    page_hash: str = ""
    buttons: dict[str, str] = field(default_factory=dict)  # label -> widget id
    follow_id: str | None = None
    follow_args: dict[str, Any] = field(default_factory=dict)
    fragments: dict[str, float] = field(default_factory=dict)  # fragment id -> interval s

    def _note(self, msg: ForwardMsg) -> None:
        super()._note(msg)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash
        elif kind == "auto_rerun":
            self.fragments[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            which = element.WhichOneof("type")
            if which == "button":
                self.buttons[element.button.label] = element.button.id
            elif which == "component_instance":
                component = element.component_instance
                if component.component_name.endswith(FOLLOW_COMPONENT):
                    self.follow_id = component.id
                    self.follow_args = json.loads(component.json_args or "{}")

    async def send(self, widgets: list[Any], fragment: str = "") -> float:
        """A rerun with these widget states (BackMsg widget protos set by the caller) or of one
        fragment; seconds until it finished."""
        back = BackMsg()
        state = back.rerun_script
        state.query_string, state.page_script_hash = self.query_string, self.page_hash
        if fragment:
            state.fragment_id, state.is_auto_rerun = fragment, True
        for set_value in widgets:
            set_value(state.widget_states.widgets.add())
        while not self.inbox.empty():
            self._note(self.inbox.get_nowait()[1])
        start = time.perf_counter()
        await self.ws.send(back.SerializeToString())
        return await self._until_finished(120.0) - start

    async def click(self, label: str) -> float:
        """Press the button labelled `label`; seconds until the page ran."""
        return await self.press(self.buttons[label])

    async def press(self, widget: str) -> float:
        """Press the button whose widget id is `widget`; seconds until the page ran."""

        def pressed(w: Any) -> None:
            w.id, w.trigger_value = widget, True

        return await self.send([pressed])

    async def redraw(self, version: int) -> float:
        """What the follow component does on a new version: its value, a rerun."""
        assert self.follow_id is not None, "no follow component on the page"
        value = json.dumps([version, time.time() * 1000])
        widget = self.follow_id

        def component(w: Any) -> None:
            w.id, w.json_value = widget, value

        return await self.send([component])


class Follower:
    """The follow component's request, held on one kept-alive connection."""

    def __init__(self, url: str, code: str, me: str) -> None:
        parts = urlparse(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.path, self.me = f"/{FOLLOW_PATH}/{code}", me
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def ask(self, after: int) -> tuple[int, dict[str, Any]]:
        """One request: the status and the JSON answer (held by the server until the version
        is not `after`, or HOLD_SECONDS). A kept-alive connection the server closed (uvicorn
        does after 5 s idle) is opened again, as a browser's fetch does."""
        for again in (False, True):
            try:
                return await self._ask(after)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if again:
                    raise
        raise AssertionError("unreachable")

    async def _ask(self, after: int) -> tuple[int, dict[str, Any]]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        target = f"{self.path}?after={after}&me={self.me}"
        self.writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        await self.writer.drain()
        first = await self.reader.readline()
        if not first:
            raise ConnectionError("the server closed the connection")
        status, length = int(first.split()[1]), 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, json.loads(await self.reader.readexactly(length))

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


@dataclass
class Student:
    """One student: the page, its follow request and its fragments' timers."""

    page: Page
    follower: Follower
    shown: int  # the version the page was last drawn with
    got: dict[int, float] = field(default_factory=dict)  # version -> when the route brought it
    drawn: dict[int, float] = field(default_factory=dict)  # version -> when the page was drawn
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    redraw_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    following: concurrent.futures.Future[None] | None = None  # on the followers' loop

    @classmethod
    async def join(cls, url: str, code: str) -> Student:
        page = Page(url, {"class": code})
        await page.open()
        if page.follow_id is None:
            raise RuntimeError(f"the page of class {code} drew no follow component")
        args = page.follow_args
        return cls(page, Follower(url, code, args["student"]), int(args["version"]))

    def start(self, followers: asyncio.AbstractEventLoop, fragments: bool = True) -> None:
        """Hold the follow request on `followers`, a loop of its own in another thread (the
        time a request comes back is then not held up by this loop reading other pages), and
        redraw on this one."""
        here = asyncio.get_running_loop()
        self.following = asyncio.run_coroutine_threadsafe(self._follow(here), followers)
        if fragments:
            self.start_fragments()

    def start_fragments(self) -> None:
        for fragment, interval in self.page.fragments.items():
            self.tasks.append(asyncio.create_task(self._every(fragment, interval)))

    async def _follow(self, pages: asyncio.AbstractEventLoop) -> None:
        """As the component: hold the request; on a new version ask for the redraw (a rerun,
        on the pages' loop) and hold the next request at once, without waiting for the page."""
        known = self.shown
        try:
            while True:
                status, answer = await self.follower.ask(known)
                if status != 200:
                    raise RuntimeError(f"the follow route answered {status}: {answer}")
                if answer["version"] != known:
                    known = answer["version"]
                    self.got[known] = time.perf_counter()
                    pages.call_soon_threadsafe(self._redraw_soon, known)
        finally:
            await self.follower.close()

    def _redraw_soon(self, version: int) -> None:
        self.tasks.append(asyncio.create_task(self._redraw(version)))

    async def _redraw(self, version: int) -> None:
        async with self.redraw_lock:  # the page runs one thing at a time, as Streamlit does
            await self.page.redraw(version)
            self.shown = version
            self.drawn[version] = time.perf_counter()

    def failed(self) -> BaseException | None:
        """The error that ended one of this student's tasks, if one did."""
        done = self.following is not None and self.following.done()
        if done and self.following is not None and not self.following.cancelled():
            error = self.following.exception()
            if error is not None:
                return error
        for task in self.tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                return task.exception()
        return None

    async def answer(self, i: int) -> int:
        """Tap option i (of those shown) of the question on screen, as the page's buttons do;
        1 if the page then shows it chosen (✓), else 0."""
        options = sorted((wid for wid in self.page.buttons.values() if "lec_option_" in wid),
                         key=lambda wid: wid.rsplit("_", 1)[-1])  # fmt: skip
        if not options:
            raise RuntimeError("no answer buttons on the student's page")
        async with self.redraw_lock:
            self.page.buttons.clear()
            await self.page.press(options[i % len(options)])
        return int(any(label.startswith("✓ ") for label in self.page.buttons))

    async def _every(self, fragment: str, interval: float) -> None:
        await asyncio.sleep(interval * random.random())  # pages opened at different times
        while True:
            async with self.redraw_lock:  # the page runs one thing at a time, as Streamlit does
                await self.page.send([], fragment=fragment)
            await asyncio.sleep(interval)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.following is not None:
            self.following.cancel()  # its connection closes on its own loop
        await self.page.close()
