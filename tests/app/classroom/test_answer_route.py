"""The answer route as a student's page (or a script holding a student's link) calls it: an
answer to the question on screen is stored and can be changed until the reveal, and read back;
everything else is refused with a message and its status, nothing stored: a bad code, student,
question or choice, a body too large, not JSON or not sent as JSON, a student the class does
not have, a question no longer on screen or already revealed, one address asking too much."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

from attnlens.app.classroom.answer_route import MAX_BODY, answer_route
from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.limits import AWAY
from attnlens.app.classroom.sqlite_store import SQLiteStore
from attnlens.app.classroom.state import ClassState, Created
from attnlens.app.classroom.store import ClassStore
from attnlens.app.teaching.questions import Question
from helpers.asgi_call import call

QUESTION = Question("where", "Which key?", ("0 · the", "1 · cat", "2 · sat", "3 · ."), 2, "why")
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def made(store: ClassStore) -> Created:
    created = store.create(ClassState("section3", 3))
    state = store.state(created.code)
    assert state is not None
    asked = state.moved(question=QUESTION.to_dict(), question_id=QUESTION.id)
    store.update(created.code, created.key, asked)
    return created


def post(
    board: VersionBoard, code: str, body: Any, headers: dict[str, str] | None = None, **more: Any
) -> tuple[int, Any]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {**(JSON if headers is None else headers), "Content-Length": str(len(raw))}
    app = Starlette(routes=[answer_route(lambda: board.store)])
    status, said, _ = asyncio.run(call(app, f"/_attnlens/answer/{code}", "POST", raw, sent, **more))
    return status, said


def mine(board: VersionBoard, code: str, me: str, question: str = QUESTION.id) -> tuple[int, Any]:
    app = Starlette(routes=[answer_route(lambda: board.store)])
    status, said, _ = asyncio.run(
        call(app, f"/_attnlens/answer/{code}?me={me}&question={question}")
    )
    return status, said


def test_an_answer_is_stored_changed_and_read_back(
    store: ClassStore, board: VersionBoard, made: Created
) -> None:
    me = store.join(made.code).id
    assert mine(board, made.code, me) == (200, {"chosen": None, "question": QUESTION.id})
    sent = {"me": me, "question": QUESTION.id, "choice": 1}
    assert post(board, made.code, sent) == (200, {"chosen": 1, "question": QUESTION.id})
    assert post(board, made.code, {**sent, "choice": 3})[0] == 200  # a change of mind
    assert store.counts(made.code, QUESTION.id, 4) == [0, 0, 0, 1]
    assert mine(board, made.code, me) == (200, {"chosen": 3, "question": QUESTION.id})


def test_a_body_sent_in_pieces_is_read_whole(
    store: ClassStore, board: VersionBoard, made: Created
) -> None:
    me = store.join(made.code).id
    sent = {"me": me, "question": QUESTION.id, "choice": 0}
    assert post(board, made.code, sent, chunk=7)[0] == 200
    assert store.answer_of(made.code, me, QUESTION.id) == 0


@pytest.mark.parametrize(
    ("change", "status", "says"),
    [
        ({"me": "not-an-id"}, 400, "not a student id"),
        ({"me": None}, 400, "not a student id"),
        ({"question": "x" * 16}, 400, "not a question id"),
        ({"question": "0123456789abcdef"}, 409, "no longer the one on screen"),
        ({"choice": 4}, 400, "options 0 to 3"),
        ({"choice": -1}, 400, "options 0 to 3"),
        ({"choice": True}, 400, "not an option's number"),
        ({"choice": "1"}, 400, "not an option's number"),
        ({"choice": 1.0}, 400, "not an option's number"),
        ({"me": "A" * 23}, 403, "not in class"),  # the right shape, never given out
    ],
)
def test_a_bad_answer_is_refused_and_nothing_stored(
    store: ClassStore,
    board: VersionBoard,
    made: Created,
    change: dict[str, Any],
    status: int,
    says: str,
) -> None:
    me = store.join(made.code).id
    sent = {"me": me, "question": QUESTION.id, "choice": 1, **change}
    got, said = post(board, made.code, sent)
    assert got == status and says in said["error"], said
    assert store.counts(made.code, QUESTION.id, 4) == [0, 0, 0, 0]


@pytest.mark.parametrize(
    ("body", "headers", "status", "says"),
    [
        (b"x" * (MAX_BODY + 1), None, 413, f"at most {MAX_BODY} bytes"),
        (b"{not json", None, 400, "is JSON"),
        (b"[1, 2]", None, 400, "a JSON object"),
        (b"\xff\xfe", None, 400, "is JSON"),
        (b'{"choice": 1}', {"Content-Type": "text/plain"}, 415, "application/json"),
        (b'{"choice": 1}', {}, 415, "application/json"),
    ],
)
def test_a_body_that_is_not_an_answer_is_refused(
    board: VersionBoard, made: Created, body: bytes, headers: dict[str, str] | None, status: int,
    says: str,
) -> None:  # fmt: skip
    got, said = post(board, made.code, body, headers)
    assert got == status and says in said["error"], said


def test_a_body_longer_than_it_says_is_cut_off(board: VersionBoard, made: Created) -> None:
    """A client that says a small length and streams more is stopped at MAX_BODY."""
    app = Starlette(routes=[answer_route(lambda: board.store)])
    headers = {**JSON, "Content-Length": "10"}
    status, said, _ = asyncio.run(
        call(app, f"/_attnlens/answer/{made.code}", "POST", b"{" * 5000, headers, chunk=100)
    )
    assert status == 413 and str(MAX_BODY) in said["error"]


def test_no_answers_after_the_reveal(store: ClassStore, board: VersionBoard, made: Created) -> None:
    me = store.join(made.code).id
    state = store.state(made.code)
    assert state is not None
    store.update(made.code, made.key, state.moved(revealed=QUESTION.id))
    got, said = post(board, made.code, {"me": me, "question": QUESTION.id, "choice": 2})
    assert got == 409 and "revealed" in said["error"]
    assert store.counts(made.code, QUESTION.id, 4) == [0, 0, 0, 0]


def test_a_removed_student_is_refused(
    store: ClassStore, board: VersionBoard, made: Created
) -> None:
    me = store.join(made.code).id
    store.remove(made.code, made.key, me)
    got, said = post(board, made.code, {"me": me, "question": QUESTION.id, "choice": 2})
    assert got == 403 and f"not in class {made.code}" in said["error"]


@pytest.mark.parametrize(
    ("code", "status", "says"), [("abc", 400, "not a join code"), ("ABCDEF", 404, "no class")]
)
def test_a_bad_or_unknown_code_is_refused(
    store: ClassStore, board: VersionBoard, made: Created, code: str, status: int, says: str
) -> None:
    me = store.join(made.code).id
    got, said = post(board, code, {"me": me, "question": QUESTION.id, "choice": 2})
    assert got == status and says in said["error"]
    assert mine(board, code, me)[0] in (400, 200)  # reading one's answer: never an error page


def test_reading_back_checks_its_fields(board: VersionBoard, made: Created) -> None:
    assert mine(board, made.code, "bad")[0] == 400
    assert mine(board, made.code, "A" * 16, "nope")[0] == 400


def test_a_store_that_is_away_is_said_in_the_students_words(tmp_path: Path) -> None:
    """The store closed (unreachable): 503 with what students are told, never its address."""
    path = tmp_path / "away.sqlite3"
    store = SQLiteStore(path)
    made = store.create(ClassState("section3", 0))
    me = store.join(made.code).id
    store.close()
    app = Starlette(routes=[answer_route(lambda: store)])
    body = json.dumps({"me": me, "question": QUESTION.id, "choice": 0}).encode()
    headers = {**JSON, "Content-Length": str(len(body))}
    status, said, _ = asyncio.run(
        call(app, f"/_attnlens/answer/{made.code}", "POST", body, headers)
    )
    assert (status, said) == (503, {"error": AWAY})
    assert str(tmp_path) not in json.dumps(said)


def posts(
    app: Any, code: str, sent: list[tuple[str, int]], address: str = "127.0.0.1"
) -> list[tuple[int, Any, dict[str, str]]]:
    """Each (student, choice) posted in turn to one app (its rates held between them)."""

    async def each() -> list[tuple[int, Any, dict[str, str]]]:
        done = []
        for me, choice in sent:
            raw = json.dumps({"me": me, "question": QUESTION.id, "choice": choice}).encode()
            headers = {**JSON, "Content-Length": str(len(raw))}
            path = f"/_attnlens/answer/{code}"
            done.append(await call(app, path, "POST", raw, headers, address=address))
        return done

    return asyncio.run(each())


def test_a_student_past_their_rate_is_refused_with_429_and_another_is_not(
    store: ClassStore, board: VersionBoard, made: Created
) -> None:
    """The issue's flood (one student's id, 9,180 answers in 15 s, all 200): a burst of five,
    then one a second; the rest is refused with a message and when to try again."""
    flood, other = store.join(made.code).id, store.join(made.code).id
    app = Starlette(routes=[answer_route(lambda: board.store, student_rate=(0.01, 5))])
    got = posts(app, made.code, [(flood, i % 4) for i in range(40)] + [(other, 2)])
    assert [g[0] for g in got] == [200] * 5 + [429] * 35 + [200]
    _, said, headers = got[5]
    assert "faster than the class takes answers" in said["error"]
    assert int(headers["retry-after"]) >= 1
    assert store.answer_of(made.code, flood, QUESTION.id) == 4 % 4  # the fifth, counted last
    assert store.answer_of(made.code, other, QUESTION.id) == 2


def test_new_students_from_one_address_share_its_rate(
    store: ClassStore, board: VersionBoard, made: Created
) -> None:
    """Students made up one after another (a new browser cookie for each join) each get a
    student's rate, and together no more than their address's: another address is answered."""
    many = [store.join(made.code).id for _ in range(12)]
    app = Starlette(routes=[answer_route(lambda: board.store, address_rate=(0.01, 10))])
    got = posts(app, made.code, [(me, 1) for me in many], address="10.0.0.7")
    assert [g[0] for g in got] == [200] * 10 + [429] * 2
    assert "from your network address" in got[-1][1]["error"]
    assert posts(app, made.code, [(many[-1], 1)], address="10.0.0.8")[0][0] == 200


def test_a_body_that_does_not_arrive_is_refused_in_time_and_the_connection_closed(
    board: VersionBoard, made: Created
) -> None:
    app = Starlette(routes=[answer_route(lambda: board.store, body_seconds=0.5)])
    headers = {**JSON, "Content-Length": "60"}
    for body in (b"", b'{"me": '):  # headers only; half a body
        status, said, got = asyncio.run(
            call(app, f"/_attnlens/answer/{made.code}", "POST", body, headers, ends="stalls")
        )
        assert status == 408 and "did not arrive within 0.5 s" in said["error"]
        assert got["connection"] == "close"


def test_a_client_that_leaves_mid_body_ends_its_request_without_an_error(
    board: VersionBoard, made: Created
) -> None:
    """It was a ClientDisconnect traceback of 55 lines in the server's log per client."""
    app = Starlette(routes=[answer_route(lambda: board.store)])
    headers = {**JSON, "Content-Length": "60"}
    status, _, _ = asyncio.run(
        call(app, f"/_attnlens/answer/{made.code}", "POST", b'{"me": ', headers, ends="leaves")
    )
    assert status == 499  # answered to no one; raised nothing
