"""The slide route as a student's page calls it: the class's slide as one payload, built once for
every student asking at the same moment (and again only when the class moves), the same bytes
for each; refused without a build for a bad code, a bad version, a class that does not exist,
or one address asking too much at once; a slide that cannot be built answered with its reason."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from starlette.applications import Starlette

from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.follow_route import follow_route
from attnlens.app.classroom.slide_route import Payloads, Slides, SlideUnavailableError, slide_route
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore
from helpers.asgi_call import call


class Builder:
    """The page's side, played: a payload naming the state it was built from, counted, slow
    enough (0.2 s) that every request of a burst arrives while it builds."""

    def __init__(self, fails: Exception | None = None) -> None:
        self.built: list[tuple[str, int, str]] = []
        self.fails = fails
        self.threads: set[str] = set()

    def __call__(self, code: str, state: ClassState, screen: str) -> bytes:
        self.built.append((code, state.version, screen))
        self.threads.add(threading.current_thread().name)
        time.sleep(0.2)
        if self.fails is not None:
            raise self.fails
        return json.dumps({"version": state.version, "slide": state.slide}).encode()


def app_of(board: VersionBoard, build: Builder, per_address: int = 1000) -> Starlette:
    return Starlette(routes=[slide_route(lambda: board, Slides(build), per_address=per_address)])


def test_a_burst_of_students_gets_one_build_and_the_same_bytes(
    store: ClassStore, board: VersionBoard
) -> None:
    made = store.create(ClassState("section3", 2))
    build = Builder()
    app = app_of(board, build)

    async def burst(n: int, path: str) -> list[tuple[int, object, dict[str, str]]]:
        return await asyncio.gather(*(call(app, path) for _ in range(n)))

    answers = asyncio.run(burst(50, f"/_attnlens/slide/{made.code}?v=0"))
    assert build.built == [(made.code, 0, "screen")]  # once for 50 students
    assert {name.split("_")[0] for name in build.threads} == {"attnlens-slides"}  # not the loop
    bodies = {json.dumps(body) for _, body, _ in answers}
    assert {status for status, _, _ in answers} == {200} and len(bodies) == 1
    assert answers[0][1] == {"version": 0, "slide": 2}
    assert answers[0][2]["cache-control"] == "no-store"
    asyncio.run(burst(3, f"/_attnlens/slide/{made.code}?v=0&present=1"))  # the projector's size
    assert build.built[1:] == [(made.code, 0, "projector")]
    asyncio.run(burst(3, f"/_attnlens/slide/{made.code}?v=0&size=phone"))  # a phone's layout
    assert build.built[2:] == [(made.code, 0, "phone")]
    build.built = build.built[:2]
    store.update(made.code, made.key, store.state(made.code).moved(slide=3))  # type: ignore[union-attr]
    deadline = time.monotonic() + 30
    while board.version(made.code) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)  # the board's thread reads the new version (every 0.1 s)
    moved = asyncio.run(burst(20, f"/_attnlens/slide/{made.code}?v=1"))
    assert build.built[2:] == [(made.code, 1, "screen")]
    assert {json.dumps(body) for _, body, _ in moved} == {json.dumps({"version": 1, "slide": 3})}


def test_a_stale_version_gets_the_current_slide(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 2))
    store.update(made.code, made.key, store.state(made.code).moved(slide=5))  # type: ignore[union-attr]
    status, body, _ = asyncio.run(
        call(app_of(board, Builder()), f"/_attnlens/slide/{made.code}?v=0")
    )
    assert (status, body) == (200, {"version": 1, "slide": 5})


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/_attnlens/slide/abc?v=0", 400, "not a join code"),
        ("/_attnlens/slide/ABCDEFG?v=0", 400, "not a join code"),
        ("/_attnlens/slide/{code}?v=x", 400, "not a class version"),
        ("/_attnlens/slide/{code}", 400, "not a class version"),
        ("/_attnlens/slide/{code}?v=99999999999999999999", 400, "not a class version"),
        ("/_attnlens/slide/ABCDEF?v=0", 404, "no class ABCDEF"),
    ],
)
def test_a_bad_request_is_refused_without_a_build(
    store: ClassStore, board: VersionBoard, path: str, status: int, says: str
) -> None:
    made = store.create(ClassState("section3", 0))
    build = Builder()
    got, body, _ = asyncio.run(call(app_of(board, build), path.format(code=made.code)))
    assert got == status and says in body["error"] and build.built == []


def test_a_slide_that_cannot_be_built_says_why_and_is_tried_again(
    store: ClassStore, board: VersionBoard
) -> None:
    made = store.create(ClassState("section3", 0))
    build = Builder(SlideUnavailableError("model 'x' cannot be loaded: not allowed here"))
    app = app_of(board, build)
    for _ in range(2):  # a failure is not kept: the next request builds again
        status, body, headers = asyncio.run(call(app, f"/_attnlens/slide/{made.code}?v=0"))
        assert status == 503 and body == {"error": "model 'x' cannot be loaded: not allowed here"}
        assert headers["retry-after"]
    assert len(build.built) == 2


def test_a_bug_in_a_slide_is_a_message_never_a_traceback(
    store: ClassStore, board: VersionBoard, capsys: pytest.CaptureFixture[str]
) -> None:
    made = store.create(ClassState("section3", 0))
    build = Builder(KeyError("secret internals"))
    status, body, _ = asyncio.run(call(app_of(board, build), f"/_attnlens/slide/{made.code}?v=0"))
    assert status == 503 and body == {"error": "this slide cannot be drawn here just now"}
    assert "secret internals" in capsys.readouterr().err  # for whoever runs the server


def test_one_address_cannot_take_every_build(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 0))
    app = app_of(board, Builder(), per_address=3)

    async def burst() -> list[int]:
        asked = [call(app, f"/_attnlens/slide/{made.code}?v=0") for _ in range(5)]
        other = call(app, f"/_attnlens/slide/{made.code}?v=0", address="10.0.0.9")
        return [status for status, _, _ in await asyncio.gather(*asked, other)]

    statuses = asyncio.run(burst())
    assert sorted(statuses[:5]) == [200, 200, 200, 503, 503] and statuses[5] == 200


def test_payloads_keep_a_bounded_number() -> None:
    kept = Payloads(size=2)

    async def fill() -> None:
        for version in range(5):
            await kept.get(("ABCDEF", version, "screen"), lambda: b"x" * 10)

    asyncio.run(fill())
    assert len(kept) == 2


def test_the_follow_route_brings_the_new_slide_with_its_version(
    store: ClassStore, board: VersionBoard
) -> None:
    """Asked with `&slide=1`, a change is answered with the slide itself, from the same cache
    as the slide route (one build for both); without it, or when the slide cannot be built,
    with the version alone (the page then asks the slide route, which says why)."""
    made = store.create(ClassState("section3", 2))
    build = Builder()
    slides = Slides(build)
    app = Starlette(routes=[follow_route(lambda: board, slide=slides.quietly),
                            slide_route(lambda: board, slides)])  # fmt: skip
    follow = f"/_attnlens/follow/{made.code}?after=-1"

    async def both() -> list[tuple[int, object, dict[str, str]]]:
        return await asyncio.gather(call(app, f"{follow}&slide=1"),
                                    call(app, f"/_attnlens/slide/{made.code}?v=0"))  # fmt: skip

    (status, body, headers), (_, same, _) = asyncio.run(both())
    assert (status, body) == (200, {"version": 0, "slide": 2}) and same == body
    assert headers["cache-control"] == "no-store" and build.built == [(made.code, 0, "screen")]
    assert asyncio.run(call(app, follow))[1] == {"version": 0, "changed": True}
    failing = Slides(Builder(SlideUnavailableError("cannot")))
    app = Starlette(routes=[follow_route(lambda: board, slide=failing.quietly)])
    assert asyncio.run(call(app, f"{follow}&slide=1"))[1] == {"version": 0, "changed": True}
