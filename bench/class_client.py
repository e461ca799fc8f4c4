"""A student's page of a live class as the server sees it, with no browser: the page over
Streamlit's websocket (bench/session.py), and what the follow component does over HTTP, held as
the component holds it, so that hundreds of students fit in one Python process beside the server.

What the browser does and this client does too: open the join link (the page's first run
whole: the toggle and the follow component); hold GET /_attnlens/follow/CODE?after=V (board.py,
follow_page.py), which brings the new slide's payload with its version, built once for the
class (slide_route.py; GET /_attnlens/slide/CODE?v=V for the first), and draw it (here: read
it); answer with POST /_attnlens/answer/CODE; rerun any fragment that reruns on its own at
its interval. What it leaves out is drawing, which happens on each student's own device.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attnlens.app.classroom.follow_page import ANSWER_PATH, FOLLOW_PATH, SLIDE_PATH
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


class Http:
    """One kept-alive HTTP/1.1 connection to the server, one request at a time on it, as a
    browser's fetch uses one."""

    def __init__(self, url: str) -> None:
        parts = urlparse(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.lock: asyncio.Lock | None = None  # made on the loop that uses it

    async def request(self, method: str, target: str, body: bytes = b"") -> tuple[int, bytes]:
        """The status and the body. A kept-alive connection the server closed (uvicorn does
        after 5 s idle) is opened again, as a browser's fetch does."""
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:
            for again in (False, True):
                try:
                    return await self._request(method, target, body)
                except (ConnectionError, asyncio.IncompleteReadError):
                    await self.close()
                    if again:
                        raise
        raise AssertionError("unreachable")

    async def _request(self, method: str, target: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = f"{method} {target} HTTP/1.1\r\nHost: {self.host}\r\n"
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        await self.writer.drain()
        first = await self.reader.readline()
        if not first:
            raise ConnectionError("the server closed the connection")
        status, length = int(first.split()[1]), 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(RuntimeError):  # its loop closed first (the bench's end)
                self.writer.close()
            self.writer = None


class Follower:
    """The follow component's requests: the follow route, held on one connection; the slide's
    payload and the answers on another (a browser keeps a few connections to one server)."""

    def __init__(self, url: str, code: str, me: str) -> None:
        self.code, self.me = code, me
        self.held, self.other = Http(url), Http(url)
        self.size = 0  # bytes of the last answer to `ask`

    async def ask(self, after: int) -> tuple[int, dict[str, Any]]:
        """One request: the status and the JSON answer (held by the server until the version
        is not `after`, or HOLD_SECONDS)."""
        target = f"/{FOLLOW_PATH}/{self.code}?after={after}&me={self.me}&slide=1"
        status, body = await self.held.request("GET", target)
        self.size = len(body)
        return status, json.loads(body)

    async def slide(self, version: int) -> tuple[int, bytes]:
        """The slide's payload as the component fetches it."""
        return await self.other.request("GET", f"/{SLIDE_PATH}/{self.code}?v={version}")

    async def answer(self, question: str, choice: int) -> tuple[int, dict[str, Any]]:
        body = json.dumps({"me": self.me, "question": question, "choice": choice}).encode()
        status, said = await self.other.request("POST", f"/{ANSWER_PATH}/{self.code}", body)
        return status, json.loads(said)

    async def close(self) -> None:
        await self.held.close()
        await self.other.close()


@dataclass
class Student:
    """One student: the page, the component's requests (on the followers' loop) and the page's
    fragments' timers."""

    page: Page
    follower: Follower
    shown: int  # the version of the slide last drawn
    got: dict[int, float] = field(default_factory=dict)  # version -> when the route brought it
    drawn: dict[int, float] = field(default_factory=dict)  # version -> when its slide arrived
    sizes: list[int] = field(default_factory=list)  # bytes of each slide payload received
    question: tuple[str, int] | None = None  # the question on the slide drawn: id, options
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    page_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    following: concurrent.futures.Future[None] | None = None  # on the followers' loop
    followers: asyncio.AbstractEventLoop | None = None

    @classmethod
    async def join(cls, url: str, code: str) -> Student:
        page = Page(url, {"class": code})
        await page.open()
        if page.follow_id is None:
            raise RuntimeError(f"the page of class {code} drew no follow component")
        args = page.follow_args
        return cls(page, Follower(url, code, args["student"]), int(args["version"]))

    def start(self, followers: asyncio.AbstractEventLoop, fragments: bool = True) -> None:
        """Fetch the slide and hold the follow request on `followers`, a loop of its own in
        another thread (the time a request comes back is then not held up by this loop
        reading other pages)."""
        self.followers = followers
        self.following = asyncio.run_coroutine_threadsafe(self._follow(), followers)
        if fragments:
            self.start_fragments()

    def start_fragments(self) -> None:
        for fragment, interval in self.page.fragments.items():
            self.tasks.append(asyncio.create_task(self._every(fragment, interval)))

    async def _follow(self) -> None:
        """As the component: draw the slide of the version the page was given; hold the
        request, which brings the new slide with the new version (else fetch it, without
        waiting: the component's load) and hold the next request at once."""
        known = self.shown
        loads: set[asyncio.Task[None]] = set()
        try:
            await self._load(known)
            while True:
                status, answer = await self.follower.ask(known)
                if status != 200:
                    raise RuntimeError(f"the follow route answered {status}: {answer}")
                if answer["version"] != known:
                    known = answer["version"]
                    self.got[known] = time.perf_counter()
                    if "header" in answer:  # the new slide came with it
                        self._drawn(known, answer, self.follower.size)
                        continue
                    load = asyncio.create_task(self._load(known))
                    loads.add(load)
                    load.add_done_callback(loads.discard)
        finally:
            await self.follower.close()

    async def _load(self, version: int) -> None:
        status, body = await self.follower.slide(version)
        if status != 200:
            raise RuntimeError(f"the slide route answered {status}: {body[:200]!r}")
        self._drawn(version, json.loads(body), len(body))

    def _drawn(self, version: int, slide: dict[str, Any], size: int) -> None:
        asked = slide["question"]
        self.question = (asked["id"], len(asked["options"])) if asked and "id" in asked else None
        self.sizes.append(size)
        self.shown = max(self.shown, slide["version"])
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
        """Tap option i (of those shown) of the question on the slide, as the component's
        buttons do (a post to the answer route); 1 if the server took it, else 0."""
        if self.question is None or self.followers is None:
            raise RuntimeError("no question on the student's slide")
        qid, options = self.question
        sent = self.follower.answer(qid, i % options)
        status, said = await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(sent, self.followers)
        )
        return int(status == 200 and said.get("chosen") == i % options)

    async def _every(self, fragment: str, interval: float) -> None:
        await asyncio.sleep(interval * random.random())  # pages opened at different times
        while True:
            async with self.page_lock:  # the page runs one thing at a time, as Streamlit does
                await self.page.send([], fragment=fragment)
            await asyncio.sleep(interval)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.following is not None:
            self.following.cancel()  # its connections close on its own loop
        await self.page.close()
