"""The follow route as a student's page calls it: answered at once when the page is behind,
held until the teacher moves, "unchanged" after its hold, and refused (never held) for a bad
code, a bad version, a class that does not exist or a server holding too many requests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.follow_route import follow_route
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.stores import open_store
from helpers.asgi_call import call


@pytest.fixture
def board(store: ClassStore, tmp_path: Path) -> Iterator[VersionBoard]:
    """Few places, so that a test fills them."""
    made = VersionBoard(store, tmp_path / "board", max_waiters=4)
    yield made
    made.close()


def app_of(
    board: VersionBoard, hold_seconds: float = 30.0, base: str = "", per_address: int = 100
) -> Starlette:
    return Starlette(routes=[follow_route(lambda: board, base, hold_seconds, per_address)])


async def get(
    app: Starlette, path: str, address: str = "127.0.0.1"
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """One GET through the ASGI app, as uvicorn would send it: status, JSON body, headers."""
    return await call(app, path, address=address)


def move(store: ClassStore, code: str, key: str) -> None:
    state = store.state(code)
    assert state is not None
    store.update(code, key, state.moved(slide=state.slide + 1))


def test_a_page_behind_is_answered_at_once(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 0))
    move(store, made.code, made.key)
    started = time.monotonic()
    status, body, headers = asyncio.run(
        get(app_of(board), f"/_attnlens/follow/{made.code}?after=0")
    )
    assert (status, body) == (200, {"version": 1, "changed": True})
    assert headers["cache-control"] == "no-store"
    assert time.monotonic() - started < 10  # not held for its 30 s


def test_a_request_is_held_until_the_teacher_moves(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 0))
    app = app_of(board)

    async def wait_then_move() -> tuple[int, dict[str, Any], dict[str, str]]:
        held = asyncio.create_task(get(app, f"/_attnlens/follow/{made.code}?after=0"))
        while board.waiting < 1:
            await asyncio.sleep(0.01)
        assert not held.done()
        await asyncio.to_thread(move, store, made.code, made.key)
        return await held

    started = time.monotonic()
    status, body, _ = asyncio.run(wait_then_move())
    assert (status, body) == (200, {"version": 1, "changed": True})
    assert time.monotonic() - started < 20  # the move answered it, not the 30 s hold


def test_a_class_that_stays_put_is_answered_unchanged_after_the_hold(
    store: ClassStore, board: VersionBoard
) -> None:
    made = store.create(ClassState("section3", 0))
    started = time.monotonic()
    status, body, _ = asyncio.run(
        get(app_of(board, hold_seconds=0.5), f"/_attnlens/follow/{made.code}?after=0")
    )
    assert (status, body) == (200, {"version": 0, "changed": False})
    assert time.monotonic() - started >= 0.5
    assert board.waiting == 0


@pytest.mark.parametrize(
    "path",
    [
        "/_attnlens/follow/abc123?after=0",  # lower case: not a code as the server writes it
        "/_attnlens/follow/ABC12?after=0",
        "/_attnlens/follow/ABCDEFG?after=0",
        "/_attnlens/follow/ABCDE0?after=0",  # 0 is no letter of a join code
        "/_attnlens/follow/ABC%2F..?after=0",
        "/_attnlens/follow/ABCDEF?after=x",
        "/_attnlens/follow/ABCDEF?after=1e9",
        "/_attnlens/follow/ABCDEF?after=99999999999999999999",
        "/_attnlens/follow/ABCDEF",
    ],
)
def test_a_bad_code_or_version_is_refused_with_its_reason(board: VersionBoard, path: str) -> None:
    status, body, _ = asyncio.run(get(app_of(board), path))
    assert status == 400
    assert "code" in body["error"] or "after=" in body["error"]
    assert board.waiting == 0


def test_a_code_of_no_class_is_not_found(board: VersionBoard) -> None:
    status, body, _ = asyncio.run(get(app_of(board), "/_attnlens/follow/ABCDEF?after=0"))
    assert (status, body) == (404, {"error": "no class ABCDEF"})


def test_past_the_limit_a_request_is_refused_at_once_with_retry_after(
    store: ClassStore, board: VersionBoard
) -> None:
    made = store.create(ClassState("section3", 0))
    app = app_of(board)
    path = f"/_attnlens/follow/{made.code}?after=0"

    async def one_too_many() -> tuple[int, dict[str, Any], dict[str, str]]:
        held = [asyncio.create_task(get(app, path)) for _ in range(board.max_waiters)]
        while board.waiting < board.max_waiters:
            await asyncio.sleep(0.01)
        refused = await get(app, path)
        await asyncio.to_thread(move, store, made.code, made.key)
        assert [h[0] for h in await asyncio.gather(*held)] == [200] * board.max_waiters
        return refused

    status, body, headers = asyncio.run(one_too_many())
    assert status == 503 and "busy" in body["error"]
    assert int(headers["retry-after"]) > 0


def test_the_route_lives_under_the_server_base_path(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 0))
    app = app_of(board, base="/course/")
    status, _, _ = asyncio.run(get(app, f"/course/_attnlens/follow/{made.code}?after=-1"))
    assert status == 200


def test_a_student_waiting_counts_as_there_told_once_per_seen_seconds(
    store: ClassStore, board: VersionBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = store.create(ClassState("section3", 0))
    me = store.join(made.code).id
    app = app_of(board, hold_seconds=0.1)
    path = f"/_attnlens/follow/{made.code}?after=0&me={me}"
    told: list[str] = []
    monkeypatch.setattr(store, "seen", lambda code, student: told.append(student))
    for _ in range(3):
        assert asyncio.run(get(app, path))[0] == 200
    assert told == [me]  # once, not once per request
    asyncio.run(get(app, f"/_attnlens/follow/{made.code}?after=0&me=../../x"))
    assert told == [me]  # not a student id: ignored


def test_a_store_that_does_not_answer_still_lets_the_page_wait(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    made = store.create(ClassState("section3", 0))
    me = store.join(made.code).id
    board = VersionBoard(store, tmp_path / "board")
    try:
        board.watch(made.code)
        store.close()  # from now on every call fails, as on a store that does not answer
        status, body, _ = asyncio.run(
            get(app_of(board, hold_seconds=0.2), f"/_attnlens/follow/{made.code}?after=0&me={me}")
        )
        assert (status, body) == (200, {"version": 0, "changed": False})  # no error: it waits
    finally:
        board.close()


def test_one_address_cannot_take_every_place(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 0))
    app = app_of(board, per_address=2)
    path = f"/_attnlens/follow/{made.code}?after=0"

    async def a_script_and_a_student() -> tuple[int, int]:
        held = [asyncio.create_task(get(app, path, "10.0.0.9")) for _ in range(2)]
        while board.waiting < 2:
            await asyncio.sleep(0.01)
        script = (await get(app, path, "10.0.0.9"))[0]
        student = asyncio.create_task(get(app, path, "10.0.0.7"))  # another address: held
        while board.waiting < 3:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(move, store, made.code, made.key)
        await asyncio.gather(*held)
        return script, (await student)[0]

    assert asyncio.run(a_script_and_a_student()) == (503, 200)
