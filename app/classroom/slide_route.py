"""The slide route: the class's current slide as one payload, built once per class version and
screen (a projector, a student's screen, a phone's) and sent as the same bytes to every student
(a Streamlit rerun per student cost ~35 ms of server CPU each: 300 students took 11 s to
redraw). The student's browser draws it (board.py's FOLLOW_HTML). Served beside the app by
app/web/served.py (`attnlens serve`).

    GET /_attnlens/slide/CODE?v=VERSION[&present=1|&size=phone]
    200 the payload (JSON): the slide as of the class's current version (VERSION is the one the
        page was told of; a newer one is what it gets, which says its own version)
    400 a code that is not a join code, or a VERSION not a number
    404 no such class
    503 the slide cannot be built now (its model cannot load: the message says why), or
        PER_ADDRESS requests from the caller's network address at once (Retry-After)

What the payload holds is built by the page's side (app/web/lecture/slide_payload.py: it needs
the models every session shares); this module only caches it and answers, without Streamlit.
"""

from __future__ import annotations

import asyncio
import sys
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.follow_page import SLIDE_PATH
from attnlens.app.classroom.follow_route import VERSION
from attnlens.app.classroom.limits import ClassError
from attnlens.app.classroom.names import CODE
from attnlens.app.classroom.route_parts import (
    NOT_STORED,
    PER_ADDRESS,
    RETRY_AFTER_SECONDS,
    Limit,
    busy,
    prefix,
    reply,
    screen_of,
)
from attnlens.app.classroom.state import ClassState

MAX_PAYLOADS = 48  # payloads kept per process: a few classes, each a few versions, three screens
BUILDERS = 2  # threads building payloads (each built once: a class's moves are seconds apart)
Key = tuple[str, int, str]  # (class code, version, screen: route_parts.screen_of)
# The page's side: the payload of a class's state for a screen (PROJECTOR, SCREEN or PHONE).
Build = Callable[[str, ClassState, str], bytes]


class SlideUnavailableError(Exception):
    """The slide cannot be built now (its model cannot load, its deck is not here); the
    message says why, in words fit for a student."""


class Payloads:
    """The payloads built, by key, at most `size` (least recently sent dropped first); each
    built once even when every student of a class asks at the same moment: the first request
    builds it in a thread of BUILDERS, the others wait for that build."""

    def __init__(self, size: int = MAX_PAYLOADS) -> None:
        self.size = size
        # Threads of their own: a build never waits behind the store's writes in the loop's
        # default pool (300 students' "still here" writes every 10 s held it up by seconds).
        self._pool = ThreadPoolExecutor(BUILDERS, thread_name_prefix="attnlens-slides")
        self._made: OrderedDict[Key, bytes] = OrderedDict()
        self._making: dict[Key, asyncio.Task[bytes | None]] = {}

    async def get(self, key: Key, make: Callable[[], bytes | None]) -> bytes | None:
        """The payload for key; None when there is no such class (never kept)."""
        if key in self._made:
            self._made.move_to_end(key)
            return self._made[key]
        building = self._making.get(key)
        if building is None:
            building = self._making[key] = asyncio.create_task(self._build(key, make))
        # shielded: a student who leaves mid-build cancels their wait, not the others' build
        return await asyncio.shield(building)

    async def _build(self, key: Key, make: Callable[[], bytes | None]) -> bytes | None:
        try:
            made = await asyncio.get_running_loop().run_in_executor(self._pool, make)
        finally:
            del self._making[key]
        if made is not None:
            self._made[key] = made
            while len(self._made) > self.size:
                self._made.popitem(last=False)
        return made

    def __len__(self) -> int:
        return len(self._made)


class Slides:
    """The payloads of the classes' slides: built by `build` once per key, kept in `payloads`;
    sent by the slide route, and by the follow route with the version that brought them."""

    def __init__(self, build: Build, payloads: Payloads | None = None) -> None:
        self.build = build
        self.payloads = payloads if payloads is not None else Payloads()

    async def body(
        self, followed: VersionBoard, code: str, version: int, screen: str
    ) -> bytes | None:
        """The payload of the class at `version` (or newer) for `screen`; raises
        SlideUnavailableError, or ClassError when the store does not answer; None: no such
        class."""
        key = (code, version, screen)
        return await self.payloads.get(key, lambda: self._made(followed, code, screen))

    async def quietly(
        self, followed: VersionBoard, code: str, version: int, screen: str
    ) -> bytes | None:
        """`body`, or None where it raises (the page then asks the slide route, which says
        why)."""
        try:
            return await self.body(followed, code, version, screen)
        except (SlideUnavailableError, ClassError):
            return None

    async def response(self, followed: VersionBoard, code: str, screen: str) -> Response:
        """The slide route's answer: the payload of the class's version as read here."""
        known = followed.version(code)
        if known is None:  # no page of this process follows it yet: read it once
            known = await asyncio.to_thread(followed.read, code)
        if known is None:
            return busy("the class store does not answer")
        if known == -1:
            return reply(404, {"error": f"no class {code}"})
        try:
            body = await self.body(followed, code, known, screen)
        except SlideUnavailableError as err:
            return reply(503, {"error": str(err)}, {"Retry-After": str(RETRY_AFTER_SECONDS)})
        except ClassError as err:  # the store does not answer: in words for students
            return reply(503, {"error": err.for_students},
                          {"Retry-After": str(RETRY_AFTER_SECONDS)})  # fmt: skip
        if body is None:
            return reply(404, {"error": f"no class {code}"})
        return Response(body, media_type="application/json", headers=NOT_STORED)

    def _made(self, followed: VersionBoard, code: str, screen: str) -> bytes | None:
        state = followed.store.state(code)
        if state is None:
            return None
        try:
            return self.build(code, state, screen)
        except (SlideUnavailableError, ClassError):
            raise
        except Exception as err:  # a bug in a slide: a message for the student, the rest
            print(f"attnlens: class {code}: slide not built ({err!r})", file=sys.stderr)
            raise SlideUnavailableError("this slide cannot be drawn here just now") from err


def slide_route(
    board: Callable[[], VersionBoard],
    slides: Slides,
    base: str = "",
    per_address: int = PER_ADDRESS,
) -> Route:
    """The route, under the server's base path; `board`: the process's board (the class's
    version, and its store), asked at the first request; `slides`: the payloads."""
    limit = Limit(per_address)

    async def slide(request: Request) -> Response:
        code = request.path_params["code"]
        given = request.query_params.get("v", "")
        if not CODE.fullmatch(code):
            return reply(400, {"error": f"class code {code[:40]!r}: not a join code "
                                "(6 capital letters and digits)"})  # fmt: skip
        if not VERSION.fullmatch(given):
            return reply(400, {"error": f"v={given[:40]!r}: not a class version"})
        address = limit.take(request)
        if address is None:
            return busy(f"{limit.most} requests from one address are asked here already")
        try:
            return await slides.response(board(), code, screen_of(request.query_params))
        finally:
            limit.give(address)

    return Route(f"{prefix(base)}/{SLIDE_PATH}/{{code}}", slide, methods=["GET"])
