"""A live class as the class tests and benches set one up: a question on screen, students
joined, in the store the server will use (then closed: from there on only servers write)."""

from __future__ import annotations

import http.client
import json
from typing import Any

from attnlens.app.classroom.state import ClassState, Created
from attnlens.app.classroom.stores import open_store
from attnlens.app.teaching.questions import Question

QUESTION = Question("where", "Which key?", ("0 · the", "1 · cat", "2 · sat", "3 · ."), 2, "why")


def asking(state: ClassState, question: Question = QUESTION) -> ClassState:
    """The class with `question` on screen, not revealed."""
    return state.moved(question=question.to_dict(), question_id=question.id, revealed=None)


def class_asking(url: str, students: int) -> tuple[Created, list[str]]:
    """A new class in the store at `url` asking QUESTION, and the ids of `students` joined."""
    store = open_store(url)
    made = store.create(ClassState("section3", 3))
    state = store.state(made.code)
    assert state is not None
    store.update(made.code, made.key, asking(state))
    joined = [store.join(made.code).id for _ in range(students)]
    store.close()
    return made, joined


def post_answer(
    conn: http.client.HTTPConnection, code: str, me: str, choice: int
) -> tuple[int, dict[str, Any]]:
    """One answer to QUESTION through the answer route, on a kept-alive connection: the status
    and what came back."""
    body = json.dumps({"me": me, "question": QUESTION.id, "choice": choice})
    conn.request("POST", f"/_attnlens/answer/{code}", body, {"Content-Type": "application/json"})
    reply = conn.getresponse()
    said = json.loads(reply.read() or b"{}")
    return reply.status, said
