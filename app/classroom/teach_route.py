"""The teach route: a browser becomes the teacher of a class with a one-time code the teacher's
page made (store.hand_over), and keeps a pass for the class in a cookie that only this server
reads (HttpOnly: no script on any page reads it; SameSite=Strict: no other site's page sends
it). Nothing that moves a class is ever in an address, so a link copied from the teacher's
window, or read off a projector, joins as a student (issue 49). Served beside the app by
app/web/served.py (`attnlens serve`).

    GET  /_attnlens/teach[?class=CODE]   a page with a form: the class's code, the one-time code
    POST /_attnlens/teach   class=CODE&once=ONCE (the form) or {"class": CODE, "once": ONCE}
    303 to the class's lecture page (the form), or 200 {"ok": true} (JSON: the teacher's own
        page keeping its key this way, app/web/lecture/teacher_key.py), the cookie set
    403 not the class's open one-time code (wrong, used, expired, or void after the store's
        ONCE_WRONG wrong tries at it): the same words whichever, so a guess learns nothing
    429 past TRIES from one network address (a burst, then one every 30 s; Retry-After)
    503 the store does not answer

What a script holding a student's link can do here: guess. A code is 8 characters of 31 (8.5e11),
lives ONCE_SECONDS, works once, takes TRIES from one address and ONCE_WRONG from all of them.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from attnlens.app.classroom.limits import ClassError
from attnlens.app.classroom.names import normal_code
from attnlens.app.classroom.route_parts import (
    NOT_STORED,
    BodyError,
    Rate,
    address_of,
    prefix,
    read_body,
    reply,
)
from attnlens.app.classroom.store import KEEP_SECONDS, ClassStore

TEACH_PATH = "_attnlens/teach"
COOKIE_PREFIX = "attnlens_teach_"  # + the class's code: one cookie per class taught here
TRIES = (1 / 30, 10)  # (per second, burst) of tries at a one-time code from one address
MAX_BODY = 1024
PAGE = (Path(__file__).with_name("static") / "teach.html").read_text(encoding="utf-8")
WRONG = (
    "That is not the class's one-time code now: a code works once, for a few minutes. Ask "
    "the class's page for a new one."
)


def cookie_name(code: str) -> str:
    """The cookie that holds this browser's pass for class `code`."""
    return COOKIE_PREFIX + code


def teach_route(
    store: Callable[[], ClassStore], base: str = "", tries: tuple[float, int] = TRIES
) -> Route:
    """The route, under the server's base path; `store`: the process's class store."""
    rate = Rate(*tries)

    async def teach(request: Request) -> Response:
        if request.method == "GET":
            return _page(normal_code(request.query_params.get("class", "")))
        try:
            form = request.headers.get("content-type", "").startswith("application/x-www-form")
            asked = _fields(await read_body(request, MAX_BODY), form)
        except BodyError as err:
            return reply(err.status, {"error": str(err)})
        code = normal_code(asked.get("class", ""))
        wait = rate.wait(address_of(request))
        if wait:
            said = f"Too many tries from this network address: wait {math.ceil(wait)} s."
            return _refused(429, said, code, form, {"Retry-After": str(math.ceil(wait))})
        try:
            held = await _take_over(store, code, asked.get("once", "")) if code else None
        except ClassError as err:
            return _refused(503, err.for_students, code, form)
        if held is None:
            return _refused(403, WRONG, code, form)
        if form:  # back to the class, this browser now its teacher (relative: behind a proxy too)
            done: Response = RedirectResponse(f"../?page=lecture&class={code}", 303, NOT_STORED)
        else:
            done = reply(200, {"ok": True})
        done.set_cookie(cookie_name(code), held, max_age=KEEP_SECONDS, path=f"{prefix(base)}/",
                        secure=request.url.scheme == "https", httponly=True,
                        samesite="strict")  # fmt: skip
        return done

    return Route(f"{prefix(base)}/{TEACH_PATH}", teach, methods=["GET", "POST"])


async def _take_over(store: Callable[[], ClassStore], code: str, once: str) -> str | None:
    return await asyncio.to_thread(lambda: store().take_over(code, once))


def _fields(body: bytes, form: bool) -> dict[str, str]:
    """The class and the one-time code sent, as a form's fields or as JSON."""
    text = body.decode("utf-8", "replace")
    if form:
        return {k: v[0] for k, v in parse_qs(text).items() if v}
    try:
        sent = json.loads(text)
    except ValueError:
        return {}
    return {k: v for k, v in sent.items() if isinstance(v, str)} if isinstance(sent, dict) else {}


def _page(code: str, said: str = "", status: int = 200) -> HTMLResponse:
    """The form, the class's code filled in when known, with what went wrong (fixed words)."""
    shown = PAGE.replace("%ACTION%", "teach").replace("%CLASS%", html.escape(code))
    shown = shown.replace("%SAID%", f'<p class="said">{html.escape(said)}</p>' if said else "")
    return HTMLResponse(shown, status, headers={**NOT_STORED, "X-Frame-Options": "DENY"})


def _refused(
    status: int, said: str, code: str, form: bool, more: dict[str, str] | None = None
) -> Response:
    if form:
        page = _page(code, said, status)
        page.headers.update(more or {})
        return page
    return reply(status, {"error": said}, more)
