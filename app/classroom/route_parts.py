"""What the class's routes share (follow, slide, answer): their prefix under the server's base
path, how they answer, and how they bound what one caller may ask: requests in flight per
network address (Limit), requests per second per key (Rate), a body read within a few seconds
(read_body)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from attnlens.app.classroom.limits import MAX_STUDENTS

NOT_STORED = {"Cache-Control": "no-store"}
RETRY_AFTER_SECONDS = 5
# Requests one network address may hold at once: a class behind one school's NAT fits (a class
# is MAX_STUDENTS at most), and a script on one address cannot take every place (MAX_WAITERS).
PER_ADDRESS = MAX_STUDENTS
BODY_SECONDS = 5.0  # a request's body arrives within this, or the request is refused (408)
RATE_KEYS = 20_000  # callers a Rate remembers at most (students and addresses of every class)
# The screens a slide is built for: a projector (presentation mode, &present=1), a student's
# screen, a phone's (&size=phone: the page is narrower than the follow page's PHONE_BELOW_PX)
PROJECTOR, SCREEN, PHONE = "projector", "screen", "phone"


class BodyError(Exception):
    """A body that did not come as asked: the status and why (the caller may be gone)."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def screen_of(query: Mapping[str, str]) -> str:
    """The screen a request's slide is for, from its query (&present=1, &size=phone)."""
    if query.get("present", "") in ("1", "true"):
        return PROJECTOR
    return PHONE if query.get("size", "") == PHONE else SCREEN


def prefix(base: str) -> str:
    """The server's base path (Streamlit's server.baseUrlPath) as a route's prefix."""
    return f"/{base.strip('/')}" if base.strip("/") else ""


def address_of(request: Request) -> str:
    """The caller's network address ("" when the server does not know it)."""
    return request.client.host if request.client else ""


def reply(status: int, body: dict[str, object], more: dict[str, str] | None = None) -> JSONResponse:
    """A JSON answer no cache keeps."""
    return JSONResponse(body, status_code=status, headers={**NOT_STORED, **(more or {})})


def busy(why: str, status: int = 503, seconds: float = RETRY_AFTER_SECONDS) -> JSONResponse:
    """Refused for now: why, and (Retry-After) when to ask again."""
    return reply(status, {"error": f"the server is busy ({why}): ask again"},
                 {"Retry-After": str(max(1, math.ceil(seconds)))})  # fmt: skip


class Limit:
    """Requests one network address has in flight on a route (one event loop), at most `most`:
    a class behind one school's network fits, a script cannot take every place."""

    def __init__(self, most: int = PER_ADDRESS) -> None:
        self.most = most
        self.held: dict[str, int] = {}

    def take(self, request: Request) -> str | None:
        """The address, counted in; None (nothing counted) when it holds `most` already."""
        address = address_of(request)
        if self.held.get(address, 0) >= self.most:
            return None
        self.held[address] = self.held.get(address, 0) + 1
        return address

    def give(self, address: str) -> None:
        self.held[address] -= 1
        if not self.held[address]:
            del self.held[address]


class Rate:
    """At most `burst` requests at once per key, and `per_second` after that (a token bucket
    per key, refilled with time); used from one event loop. A key whose bucket is full again
    is forgotten first when more than `keys` are held, so memory stays bounded whatever ids a
    caller makes up."""

    def __init__(self, per_second: float, burst: int, keys: int = RATE_KEYS) -> None:
        if per_second <= 0 or burst < 1:
            raise ValueError(
                f"a rate needs per_second > 0 and burst >= 1, got {per_second}, {burst}"
            )
        self.per_second, self.burst, self.keys = per_second, burst, keys
        self._held: dict[str, tuple[float, float]] = {}  # key -> (tokens, when counted)

    def wait(self, key: str, now: float | None = None) -> float:
        """0.0 when a request of `key` may go now (and it is counted), else the seconds until
        one may (nothing counted)."""
        now = time.monotonic() if now is None else now
        tokens, then = self._held.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.per_second)
        if tokens < 1.0:
            self._held[key] = (tokens, now)
            return (1.0 - tokens) / self.per_second
        if key not in self._held and len(self._held) >= self.keys:
            self._forget(now)
        self._held[key] = (tokens - 1.0, now)
        return 0.0

    def _forget(self, now: float) -> None:
        """Drop the keys whose buckets are full by now; the older half when none is."""
        full = self.burst / self.per_second
        gone = [k for k, (_, then) in self._held.items() if now - then >= full]
        for key in gone or list(self._held)[: len(self._held) // 2]:
            del self._held[key]


async def read_body(request: Request, most: int, seconds: float = BODY_SECONDS) -> bytes:
    """The body, at most `most` bytes, all of it within `seconds`: a client that sends headers
    and then nothing holds a connection no longer than that (408), and one that leaves while
    sending ends its request without a traceback (BodyError 499, answered to no one)."""
    said = request.headers.get("content-length", "0")
    if not said.isdigit() or int(said) > most:
        raise BodyError(413, f"a body here is at most {most} bytes")
    read = bytearray()

    async def whole() -> None:
        async for chunk in request.stream():
            read.extend(chunk)
            if len(read) > most:
                raise BodyError(413, f"a body here is at most {most} bytes")

    try:
        await asyncio.wait_for(whole(), seconds)
    except asyncio.TimeoutError:  # TimeoutError from Python 3.11 on
        raise BodyError(408, f"the body did not arrive within {seconds:g} s") from None
    except ClientDisconnect:
        raise BodyError(499, "the client left before its body arrived") from None
    return bytes(read)
