"""Connections the server closes on its own. uvicorn (which `attnlens serve` runs Streamlit on)
closes a connection left idle after a response (its keep-alive timeout, 5 s), but one that
opens and never sends a request it keeps for ever: a script could hold every descriptor of the
server that way. A request's body has its own time limit in the routes that read one
(app/classroom/route_parts.py, read_body)."""

from __future__ import annotations

import importlib
from typing import Any

IDLE_SECONDS = 5.0  # a connection sends its first request within this, or it is closed
PROTOCOLS = (  # uvicorn's HTTP protocols: h11's, and httptools' where that is installed
    ("uvicorn.protocols.http.h11_impl", "H11Protocol"),
    ("uvicorn.protocols.http.httptools_impl", "HttpToolsProtocol"),
)
NEEDED = ("connection_made", "timeout_keep_alive_handler", "_unset_keepalive_if_required")


def close_idle_connections(seconds: float = IDLE_SECONDS) -> list[str]:
    """Have uvicorn close a connection that sends nothing for `seconds` after it opens, as it
    closes one idle after a response: the same timer (its keep-alive's), started when the
    connection is made, stopped by the first bytes that arrive. The protocols changed, by name;
    none where this uvicorn lacks the parts this relies on (then nothing is changed)."""
    changed = []
    for module, name in PROTOCOLS:
        try:
            protocol: Any = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue  # httptools not installed: uvicorn uses h11
        if not all(hasattr(protocol, part) for part in NEEDED):
            continue
        if getattr(protocol, "_attnlens_idle_seconds", None) is None:  # once per process
            protocol.connection_made = _timed(protocol.connection_made, seconds)
            protocol._attnlens_idle_seconds = seconds
        changed.append(name)
    return changed


def _timed(made: Any, seconds: float) -> Any:
    def connection_made(self: Any, transport: Any) -> None:
        made(self, transport)
        if self.timeout_keep_alive_task is None:
            self.timeout_keep_alive_task = self.loop.call_later(
                seconds, self.timeout_keep_alive_handler
            )

    return connection_made
