"""What the live-class tests share: a SQLite store in a fresh file and the board on it (the
routes' tests), and a store of each kind, SQLite and Redis (a real redis-server the session
starts, tests/helpers/redis_server.py), for the rules both must keep alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ClassStore]:
    """A SQLite store in a fresh file."""
    opened = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    yield opened
    opened.close()


@pytest.fixture
def board(store: ClassStore, tmp_path: Path) -> Iterator[VersionBoard]:
    """The board on that store, as the routes find it."""
    made = VersionBoard(store, tmp_path / "board")
    yield made
    made.close()


@pytest.fixture(params=["sqlite", "redis"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ClassStore]:
    """Each kind of store in turn."""
    if request.param == "sqlite":
        opened = open_store(f"sqlite:///{tmp_path / 'classes.sqlite3'}")
    else:
        opened = open_store(request.getfixturevalue("redis_url"))
    yield opened
    opened.close()
