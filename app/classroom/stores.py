"""Which class store a URL names, one per process: SQLite by default (one file, nothing to set
up), Redis when several replicas serve one class (docs/teaching.md and docs/deploying.md).

One object per store and process, shared by the pages, the routes and the board: a second SQLite
store on the same file in one process would be a second set of descriptors, and closing any of
them drops every POSIX lock the process holds on the file, SQLite's among them; another process
closing its connection would then checkpoint and delete the log this one still writes to (issue
45).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from attnlens.app.classroom.limits import StoreUnavailableError
from attnlens.app.classroom.redis_store import RedisStore
from attnlens.app.classroom.sqlite_store import SQLiteStore
from attnlens.app.classroom.store import ClassStore

ENV = "ATTNLENS_CLASS_STORE"
_OPEN: dict[str, ClassStore] = {}  # the stores of this process, by where they keep classes
_OPEN_LOCK = threading.Lock()


def default_url() -> str:
    """SQLite in the user's data folder: one file, kept across restarts."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return f"sqlite:///{Path(base) / 'attnlens' / 'classes.sqlite3'}"


def store_url() -> str:
    """The store this process uses: $ATTNLENS_CLASS_STORE, else the default SQLite file."""
    return os.environ.get(ENV, "").strip() or default_url()


def open_store(url: str) -> ClassStore:
    """The store a URL names, sqlite:///PATH (or a plain path) or redis://HOST:PORT[/DB]: opened
    at the first call (or the first after it was closed), the same object for every later one."""
    key, path = _where(url)
    with _OPEN_LOCK:
        store = _OPEN.get(key)
        if store is None or store.closed:
            store = _OPEN[key] = RedisStore(url) if path is None else SQLiteStore(path)
        return store


def _where(url: str) -> tuple[str, Path | None]:
    """The store's key in this process (a SQLite file's resolved path), and the file (None for
    Redis)."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return url, None
    if url.startswith("sqlite:///"):
        path = "/" + url[len("sqlite:///") :].lstrip("/")  # sqlite:////abs is /abs too
    elif "://" in url:
        raise StoreUnavailableError(
            f"class store {url!r}: give sqlite:///PATH (the default) or redis://HOST:PORT/DB"
        )
    else:
        path = url
    file = Path(path).expanduser()
    return f"sqlite:///{file.resolve()}", file
