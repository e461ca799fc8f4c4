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
    413 a body over MAX_BODY bytes; 415 a body not sent as application/json
    503 the store does not answer, or PER_ADDRESS requests from one address at once
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from attnlens.app.teaching.class_limits import ClassError
from attnlens.app.teaching.class_store import ClassStore
from attnlens.app.teaching.follow_route import PER_ADDRESS
from attnlens.app.teaching.names import CODE, valid_student_id
from attnlens.app.teaching.slide_route import Limit, answer, busy, prefix

ANSWER_PATH = "_attnlens/answer"
MAX_BODY = 1024  # bytes of an answer's body: {"me", "question", "choice"} takes ~90
QUESTION = re.compile(r"[0-9a-f]{16}")  # a question's id (questions.Question.id)


class RefusedError(Exception):
    """An answer the class does not take: the status and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def answer_route(
    store: Callable[[], ClassStore], base: str = "", per_address: int = PER_ADDRESS
) -> Route:
    """The route, under the server's base path; `store`: the store the pages of this process
    use (its copy of each class, answers included, is what it writes back should the store
    lose them), asked at the first request."""
    limit = Limit(per_address)

    async def route(request: Request) -> JSONResponse:
        address = limit.take(request)
        if address is None:
            return busy(f"{limit.most} requests from one address are asked here already")
        try:
            code = request.path_params["code"]
            if not CODE.fullmatch(code):
                raise RefusedError(400, f"class code {code[:40]!r}: not a join code "
                                   "(6 capital letters and digits)")  # fmt: skip
            taker = store()
            if request.method == "GET":
                me, question = _who(dict(request.query_params))
                chosen = await asyncio.to_thread(taker.answer_of, code, me, question)
                return answer(200, {"chosen": chosen, "question": question})
            me, question, choice = _sent(await _body(request))
            await asyncio.to_thread(_answer, taker, code, me, question, choice)
            return answer(200, {"chosen": choice, "question": question})
        except RefusedError as err:
            return answer(err.status, {"error": str(err)})
        except ClassError as err:  # the store does not answer: in words for students
            return answer(503, {"error": err.for_students}, {"Retry-After": "5"})
        finally:
            limit.give(address)

    return Route(f"{prefix(base)}/{ANSWER_PATH}/{{code}}", route, methods=["GET", "POST"])


async def _body(request: Request) -> Any:
    """The body as JSON, read no further than MAX_BODY bytes."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise RefusedError(415, f"an answer is sent as application/json, not {kind[:60]!r}")
    said = request.headers.get("content-length", "0")
    if not said.isdigit() or int(said) > MAX_BODY:
        raise RefusedError(413, f"an answer's body is at most {MAX_BODY} bytes")
    read = bytearray()
    async for chunk in request.stream():
        read += chunk
        if len(read) > MAX_BODY:
            raise RefusedError(413, f"an answer's body is at most {MAX_BODY} bytes")
    try:
        return json.loads(read)
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
