"""The answer route: a student's page (board.py's FOLLOW_HTML, which draws the slide itself)
answers the question on screen, and learns its own answer, without a Streamlit rerun. What a
student holds is a link, and someone will script it: every field is checked, the body is small
and JSON only (a form on another site cannot post it: a JSON post from another origin needs a
CORS preflight this server never grants), and nothing but a message comes back on error.

    POST /_attnlens/answer/CODE   {"me": STUDENT, "question": ID, "choice": I}
    200 {"chosen": I, "question": ID}   the store has it (a change of mind replaces it)
    GET  /_attnlens/answer/CODE?me=STUDENT&question=ID
    200 {"chosen": I or null, "question": ID}
    400 a code, student id, question id or choice that is not one, a body that is not JSON
    403 a student this class does not have (never joined, or removed by the teacher)
    404 no such class
    409 the question is not the one on screen, or its answers are revealed (closed)
    408 a body that did not arrive within BODY_SECONDS (route_parts.py)
    413 a body over MAX_BODY bytes; 415 a body not sent as application/json
    429 more answers than STUDENT_RATE from one student, or ADDRESS_RATE from one network
        address (a burst allowed, then so many a second; Retry-After says when)
    503 the store does not answer, or PER_ADDRESS requests from one address at once

A student's id is not what limits an address: ids come from joining, which the class bounds
(per_address students from one address, the class's size), so a script that makes up browsers
gains at most per_address students, each held to STUDENT_RATE, and all of them to ADDRESS_RATE.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from attnlens.app.classroom.follow_page import ANSWER_PATH
from attnlens.app.classroom.limits import MAX_STUDENTS, ClassError
from attnlens.app.classroom.names import CODE, valid_student_id
from attnlens.app.classroom.route_parts import (
    BODY_SECONDS,
    PER_ADDRESS,
    BodyError,
    Limit,
    Rate,
    address_of,
    busy,
    prefix,
    read_body,
    reply,
)
from attnlens.app.classroom.store import ClassStore

MAX_BODY = 1024  # bytes of an answer's body: {"me", "question", "choice"} takes ~90
QUESTION = re.compile(r"[0-9a-f]{16}")  # a question's id (questions.Question.id)
# (per second, burst): a student changes their mind a few times in a row, then once a second;
# a whole class behind one school's network may answer at the same moment
STUDENT_RATE = (1.0, 5)
ADDRESS_RATE = (100.0, MAX_STUDENTS)


class RefusedError(Exception):
    """An answer the class does not take: the status and why."""

    def __init__(self, status: int, why: str, retry: float = 0.0) -> None:
        super().__init__(why)
        self.status, self.retry = status, retry


def answer_route(
    store: Callable[[], ClassStore],
    base: str = "",
    per_address: int = PER_ADDRESS,
    student_rate: tuple[float, int] = STUDENT_RATE,
    address_rate: tuple[float, int] = ADDRESS_RATE,
    body_seconds: float = BODY_SECONDS,
) -> Route:
    """The route, under the server's base path; `store`: the store the pages of this process
    use (its copy of each class, answers included, is what it writes back should the store
    lose them), asked at the first request."""
    limit, rates = Limit(per_address), Rates(Rate(*student_rate), Rate(*address_rate))

    async def route(request: Request) -> Response:
        address = limit.take(request)
        if address is None:
            return busy(f"{limit.most} requests from one address are asked here already")
        try:
            return await _answered(request, store, rates, body_seconds)
        except RefusedError as err:
            more = {"Retry-After": str(math.ceil(err.retry))} if err.retry else None
            return reply(err.status, {"error": str(err)}, more)
        except BodyError as err:  # 499: the client left; no one reads this, nothing is logged
            close = {"Connection": "close"} if err.status == 408 else None
            return reply(err.status, {"error": str(err)}, close)
        except ClassError as err:  # the store does not answer: in words for students
            return reply(503, {"error": err.for_students}, {"Retry-After": "5"})
        finally:
            limit.give(address)

    return Route(f"{prefix(base)}/{ANSWER_PATH}/{{code}}", route, methods=["GET", "POST"])


@dataclass(frozen=True)
class Rates:
    """The route's rates: answers per student (code and id), and per network address."""

    students: Rate
    addresses: Rate

    def check(self, code: str, me: str, address: str) -> None:
        """Count an answer in, or refuse it (429) saying how long to wait: the student's rate
        first, so that one student's flood spends its own allowance, not its address's."""
        wait = self.students.wait(f"{code}:{me}")
        if wait:
            raise RefusedError(429, "you are answering faster than the class takes answers: "
                               f"wait {math.ceil(wait)} s and tap again", wait)  # fmt: skip
        wait = self.addresses.wait(address)
        if wait:
            raise RefusedError(429, "more answers from your network address than the class "
                               f"takes: wait {math.ceil(wait)} s and tap again", wait)  # fmt: skip


async def _answered(
    request: Request, store: Callable[[], ClassStore], rates: Rates, body_seconds: float
) -> Response:
    """The student's answer stored (POST) or read back (GET)."""
    code = request.path_params["code"]
    if not CODE.fullmatch(code):
        raise RefusedError(400, f"class code {code[:40]!r}: not a join code "
                           "(6 capital letters and digits)")  # fmt: skip
    taker = store()
    if request.method == "GET":
        me, question = _who(dict(request.query_params))
        chosen = await asyncio.to_thread(taker.answer_of, code, me, question)
        return reply(200, {"chosen": chosen, "question": question})
    me, question, choice = _sent(await _body(request, body_seconds))
    rates.check(code, me, address_of(request))
    await asyncio.to_thread(_answer, taker, code, me, question, choice)
    return reply(200, {"chosen": choice, "question": question})


async def _body(request: Request, seconds: float) -> Any:
    """The body as JSON, read no further than MAX_BODY bytes, within BODY_SECONDS."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise RefusedError(415, f"an answer is sent as application/json, not {kind[:60]!r}")
    try:
        return json.loads(await read_body(request, MAX_BODY, seconds))
    except (ValueError, UnicodeDecodeError) as err:
        raise RefusedError(400, "an answer's body is JSON: {me, question, choice}") from err


def _who(data: dict[str, Any]) -> tuple[str, str]:
    me, question = data.get("me"), data.get("question")
    if not valid_student_id(me):
        raise RefusedError(400, f"me={str(me)[:40]!r}: not a student id (the one in your link)")
    if not isinstance(question, str) or not QUESTION.fullmatch(question):
        raise RefusedError(400, f"question={str(question)[:40]!r}: not a question id")
    assert isinstance(me, str)
    return me, question


def _sent(data: Any) -> tuple[str, str, int]:
    if not isinstance(data, dict):
        raise RefusedError(400, "an answer's body is a JSON object: {me, question, choice}")
    me, question = _who(data)
    choice = data.get("choice")
    if not isinstance(choice, int) or isinstance(choice, bool):
        raise RefusedError(400, f"choice={str(choice)[:40]!r}: not an option's number")
    return me, question, choice


def _answer(store: ClassStore, code: str, me: str, question: str, choice: int) -> None:
    """The answer stored, as a student's button stored it; else why not."""
    state = store.state(code)
    if state is None:
        raise RefusedError(404, f"no class {code}")
    if state.question_id != question:
        raise RefusedError(409, "this question is no longer the one on screen")
    if state.revealed == question:
        raise RefusedError(409, "the teacher has revealed the answers: no more answers")
    if not 0 <= choice < state.options:
        raise RefusedError(
            400, f"choice {choice}: this question has options 0 to {state.options - 1}"
        )
    if not store.answer(code, me, question, choice):
        raise RefusedError(403, f"this student is not in class {code} (never joined, or removed)")
