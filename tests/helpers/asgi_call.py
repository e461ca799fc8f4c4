"""One HTTP request through an ASGI app, as uvicorn would send it, without a server: for the
routes students' pages call (app/classroom/*_route.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any


async def call(
    app: Any,
    path: str,
    method: str = "GET",
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    address: str = "127.0.0.1",
    chunk: int = 0,
    ends: str = "whole",
) -> tuple[int, Any, dict[str, str]]:
    """Status, the body (JSON when it is, else bytes) and the headers of one request; `chunk`:
    send the body in pieces of this many bytes (0: at once), as a client streaming it; `ends`:
    "whole" (the body complete), "stalls" (what was given, then nothing ever again) or
    "leaves" (what was given, then the client disconnects)."""
    target, _, query = path.partition("?")
    sent_headers = [(b"host", b"test")] + [
        (k.lower().encode(), v.encode()) for k, v in (headers or {}).items()
    ]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": target, "raw_path": target.encode(), "root_path": "",
             "query_string": query.encode(), "headers": sent_headers,
             "server": ("test", 80), "client": (address, 1234)}  # fmt: skip
    step = chunk or max(len(body), 1)
    pieces = [body[i : i + step] for i in range(0, len(body), step)] or [b""]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pieces:
            piece = pieces.pop(0)
            more = bool(pieces) or ends != "whole"
            return {"type": "http.request", "body": piece, "more_body": more}
        if ends == "stalls":
            await asyncio.Event().wait()  # never set: a client that sends no more
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    raw = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    got = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    shown: Any = (
        json.loads(raw) if got.get("content-type", "").startswith("application/json") else raw
    )
    return start["status"], shown, got
