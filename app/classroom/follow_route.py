"""The follow route: a student's page asks for its class's version after the one it knows, and
the server answers when the teacher moves (board.py says why). Served beside the app by
app/web/served.py (`attnlens serve`).

    GET /_attnlens/follow/CODE?after=VERSION[&me=STUDENT]
    200 {"version": V, "changed": true}   at once if the class's version is not VERSION, else
                                          as soon as it changes
    200 {"version": VERSION, "changed": false}   after HOLD_SECONDS unchanged: ask again
    400 a code that is not 6 letters and digits as join codes are, or a VERSION not a number
    404 no such class
    503 the process holds MAX_WAITERS requests already, or PER_ADDRESS from the caller's
        network address (Retry-After says when to ask again)

    GET /_attnlens/follow/CODE?after=VERSION&slide=1[&present=1|&size=phone]   as above, but
                                          a change is answered with the new slide's payload
                                          itself (slide_route.py) for that screen, which names
                                          its version

`me`, the student's id (their join link's), tells the store the student's page is open, at
most once per SEEN_SECONDS: the teacher's count of students there, which a page's timer used
to tell every few seconds with a rerun of its own. An id that is not one is ignored.

    POST /_attnlens/follow/CODE/left?me=STUDENT   the page is closing (its beacon): the
                                          student no longer counts as here; 204, always
                                          (429 past LEFT_RATE from one network address)

Without it a closed tab counted as there until ACTIVE_SECONDS after its last request.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from attnlens.app.classroom.board import (
    FOLLOW_PATH,
    HOLD_SECONDS,
    TooManyWaitingError,
    VersionBoard,
)
from attnlens.app.classroom.limits import MAX_STUDENTS
from attnlens.app.classroom.names import CODE, valid_student_id
from attnlens.app.classroom.route_parts import (
    NOT_STORED,
    PER_ADDRESS,
    Rate,
    address_of,
    busy,
    prefix,
    reply,
    screen_of,
)

LEFT_RATE = (100.0, MAX_STUDENTS)  # (per second, burst) from one address: a class leaving at once
VERSION = re.compile(r"-1|0|[1-9][0-9]{0,15}")  # a class's version, as a page holds it
# The slide of a class's version (board, code, version, screen: route_parts.screen_of): its
# payload, or None
Slide = Callable[[VersionBoard, str, int, str], Awaitable[bytes | None]]


def follow_route(
    board: Callable[[], VersionBoard],
    base: str = "",
    hold_seconds: float = HOLD_SECONDS,
    per_address: int = PER_ADDRESS,
    slide: Slide | None = None,
) -> Route:
    """The route, under the server's base path (`base`, Streamlit's server.baseUrlPath);
    `board`: the process's board, asked at the first request (after the server started);
    `slide`: the payload of a class's version (slide_route.py), sent in place of the version
    to a request that asks for it (`&slide=1`)."""
    holding: dict[str, int] = {}  # network address -> requests it holds now (one event loop)

    async def follow(request: Request) -> Response:
        code = request.path_params["code"]
        after = request.query_params.get("after", "")
        if not CODE.fullmatch(code):
            return reply(400, {"error": f"class code {code[:40]!r}: not a join code "
                                 "(6 capital letters and digits)"})  # fmt: skip
        if not VERSION.fullmatch(after):
            return reply(400, {"error": f"after={after[:40]!r}: not a class version"})
        known, me, followed = int(after), request.query_params.get("me"), board()
        if me is not None and valid_student_id(me) and followed.due(code, me):
            await asyncio.to_thread(followed.seen, code, me)
        address = address_of(request)
        if holding.get(address, 0) >= per_address:
            return busy(f"{per_address} requests from one address wait here already")
        holding[address] = holding.get(address, 0) + 1
        try:
            version = await followed.wait(code, known, hold_seconds)
        except TooManyWaitingError as err:
            return busy(str(err))
        finally:
            holding[address] -= 1
            if not holding[address]:
                del holding[address]
        if version == -1:
            return reply(404, {"error": f"no class {code}"})
        if version is None:
            return reply(200, {"version": known, "changed": False})
        if slide is not None and request.query_params.get("slide") == "1":
            body = await slide(followed, code, version, screen_of(request.query_params))
            if body is not None:  # the new slide itself: no second request for it
                return Response(body, media_type="application/json", headers=NOT_STORED)
        return reply(200, {"version": version, "changed": True})

    return Route(f"{prefix(base)}/{FOLLOW_PATH}/{{code}}", follow, methods=["GET"])


def left_route(board: Callable[[], VersionBoard], base: str = "") -> Route:
    """The route a closing page's beacon calls (navigator.sendBeacon on pagehide)."""
    rate = Rate(*LEFT_RATE)

    async def left(request: Request) -> Response:
        code, me = request.path_params["code"], request.query_params.get("me", "")
        if rate.wait(address_of(request)):
            return busy("too many pages closing from one address", status=429)
        if CODE.fullmatch(code) and valid_student_id(me):
            await asyncio.to_thread(board().left, code, me)
        return Response(status_code=204, headers=NOT_STORED)

    return Route(f"{prefix(base)}/{FOLLOW_PATH}/{{code}}/left", left, methods=["POST"])
