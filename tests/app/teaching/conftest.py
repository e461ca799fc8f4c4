"""What the class-store tests share: a store of each kind, SQLite in a fresh file and Redis (a
real redis-server the session starts, tests/helpers/redis_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from attnlens.app.teaching.class_store import ClassStore, open_store


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ClassStore]:
    if request.param == "sqlite":
        opened = open_store(f"sqlite:///{tmp_path / 'classes.sqlite3'}")
    else:
        opened = open_store(request.getfixturevalue("redis_url"))
    yield opened
    opened.close()
