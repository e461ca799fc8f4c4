"""The teach route (issue 49) as another device of the teacher's, and a script holding only a
student's link, call it: the one-time code gives a pass in an HttpOnly, SameSite=Strict cookie,
once; a wrong, used or made-up code gets the same refusal; one address gets a few tries. And the
follow route's /left, which a closing student's page calls: the teacher's count drops."""

from __future__ import annotations

import asyncio
import html
import json
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette

from attnlens.app.classroom.board import VersionBoard
from attnlens.app.classroom.follow_route import left_route
from attnlens.app.classroom.state import ClassState
from attnlens.app.classroom.store import ClassStore
from attnlens.app.classroom.teach_route import WRONG, cookie_name, teach_route
from helpers.asgi_call import call

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}


def teach(
    store: ClassStore, body: dict[str, str], form: bool = False, tries: tuple[float, int] = (1, 50)
) -> tuple[int, Any, dict[str, str]]:
    raw = (urlencode(body) if form else json.dumps(body)).encode()
    sent = {**(FORM if form else JSON), "Content-Length": str(len(raw))}
    app = Starlette(routes=[teach_route(lambda: store, tries=tries)])
    return asyncio.run(call(app, "/_attnlens/teach", "POST", raw, sent))


def test_the_one_time_code_sets_an_httponly_pass_once(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    once = store.hand_over(made.code, made.key).once
    status, said, headers = teach(store, {"class": made.code.lower(), "once": once})
    assert status == 200 and said == {"ok": True}
    cookie = headers["set-cookie"]
    name, _, rest = cookie.partition("=")
    value = rest.split(";")[0]
    assert name == cookie_name(made.code) and store.is_teacher(made.code, value)
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= flags, flags
    assert any(f.startswith("max-age=") for f in flags)
    again = teach(store, {"class": made.code, "once": once})  # a code works once
    assert again[0] == 403 and again[1] == {"error": WRONG} and "set-cookie" not in again[2]


def test_the_form_goes_back_to_the_class_as_its_teacher(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    once = store.hand_over(made.code, made.key).once
    status, _, headers = teach(store, {"class": made.code, "once": once[:4] + " " + once[4:]}, True)
    assert status == 303 and headers["location"] == f"../?page=lecture&class={made.code}"
    assert "httponly" in headers["set-cookie"].lower()
    status, page, _ = teach(store, {"class": made.code, "once": once}, True)
    assert status == 403 and html.escape(WRONG).encode() in page and made.code.encode() in page


def test_the_form_page_fills_in_the_class_and_escapes_what_it_is_given(store: ClassStore) -> None:
    app = Starlette(routes=[teach_route(lambda: store)])
    status, page, headers = asyncio.run(call(app, "/_attnlens/teach?class=abcdef"))
    assert status == 200 and b'value="ABCDEF"' in page and headers["x-frame-options"] == "DENY"
    status, page, _ = asyncio.run(call(app, "/_attnlens/teach?class=%22%3E%3Cscript%3E"))
    assert status == 200 and b"<script>" not in page  # not a code: left empty


def test_a_script_guessing_gets_the_same_words_and_a_few_tries(store: ClassStore) -> None:
    made = store.create(ClassState("section3", 0))
    once = store.hand_over(made.code, made.key).once
    wrong = "".join("B" if c == "A" else "A" for c in once)
    app = Starlette(routes=[teach_route(lambda: store, tries=(1 / 30, 3))])
    answers = []
    for body in ({"class": made.code, "once": wrong}, {"class": "ZZZZZZ", "once": once},
                 {"class": made.code}, {"class": made.code, "once": wrong}):  # fmt: skip
        raw = json.dumps(body).encode()
        sent = {**JSON, "Content-Length": str(len(raw))}
        answers.append(asyncio.run(call(app, "/_attnlens/teach", "POST", raw, sent)))
    assert [a[1] for a in answers[:3]] == [{"error": WRONG}] * 3
    assert answers[3][0] == 429 and int(answers[3][2]["retry-after"]) > 0
    assert teach(store, {"class": made.code, "once": once})[0] == 200  # the code still works


def test_a_closing_page_is_no_longer_counted_here(store: ClassStore, board: VersionBoard) -> None:
    made = store.create(ClassState("section3", 0))
    students = [store.join(made.code) for _ in range(2)]
    app = Starlette(routes=[left_route(lambda: board)])
    status, _, _ = asyncio.run(
        call(app, f"/_attnlens/follow/{made.code}/left?me={students[0].id}", "POST")
    )
    assert status == 204 and store.roster(made.code).active == 1
    for junk in (f"/_attnlens/follow/{made.code}/left?me=nope", "/_attnlens/follow/x/left"):
        assert asyncio.run(call(app, junk, "POST"))[0] == 204
    assert store.roster(made.code).active == 1
