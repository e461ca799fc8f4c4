"""Classes in Redis, for several attnlens replicas behind one load balancer: every replica sees
the same class. The checks that must not race (answer only the current, unrevealed question)
run inside Redis as Lua scripts."""

from __future__ import annotations

import json
import time
from typing import Any

from attnlens.app.teaching.class_state import ClassState, Roster, Student
from attnlens.app.teaching.class_store import (
    ACTIVE_SECONDS,
    KEEP_SECONDS,
    MAX_STUDENTS,
    ClassError,
    ClassStore,
    StoreUnavailableError,
)
from attnlens.app.teaching.names import new_student_id, nickname

PREFIX = "attnlens:class:"
UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'state', ARGV[1])
for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ARGV[2]) end
return version
"""
ANSWER = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return 0 end
local s = cjson.decode(state)
local options = 0
if type(s.question) == 'table' then options = #s.question.options end
local choice = tonumber(ARGV[3])
if s.question_id ~= ARGV[1] or s.revealed == ARGV[1] or choice < 0 or choice >= options then
  return 0
end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 1
"""


class RedisStore(ClassStore):
    """Keys under attnlens:class:CODE (a hash), …:students, …:seen, …:answers:QUESTION; each
    expires a week after the class last changed."""

    def __init__(self, url: str) -> None:
        try:
            import redis
        except ImportError:
            raise StoreUnavailableError(
                "a Redis class store needs the redis package: pip install 'attnlens[redis]'"
            ) from None
        self.url = url
        try:
            self._r: Any = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        except ValueError as err:
            raise StoreUnavailableError(f"class store {url!r}: {err}") from None
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        self._update_script = self._r.register_script(UPDATE)
        self._answer_script = self._r.register_script(ANSWER)

    def _call(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """One Redis call; a connection problem becomes a StoreUnavailableError with the URL."""
        try:
            return getattr(self._r, what)(*args, **kwargs)
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None

    def ping(self) -> None:
        self._call("ping")

    def close(self) -> None:
        self._r.close()

    def _keys(self, code: str) -> list[str]:
        base = PREFIX + code
        return [base, base + ":students", base + ":seen", base + ":names"]

    def _insert(self, code: str, teacher: str, state: ClassState) -> bool:
        key = PREFIX + code
        if not self._call("hsetnx", key, "teacher", teacher):
            return False
        self._call(
            "hset", key, mapping={"state": state.to_json(), "version": 0, "created": time.time()}
        )
        self._call("expire", key, KEEP_SECONDS)
        return True

    def _state(self, code: str) -> ClassState | None:
        state, version = self._call("hmget", PREFIX + code, "state", "version")
        if state is None:
            return None
        return ClassState.from_json(state.decode(), int(version or 0))

    def _teacher_hash(self, code: str) -> str | None:
        value = self._call("hget", PREFIX + code, "teacher")
        return None if value is None else str(value.decode())

    def _update(self, code: str, state: ClassState) -> ClassState:
        try:
            version = self._update_script(
                keys=self._keys(code), args=[state.to_json(), KEEP_SECONDS]
            )
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None
        if int(version) < 0:
            raise ClassError("this class has ended or expired")
        return state.moved(version=int(version))

    def _join(self, code: str, student: str | None, now: float) -> Student:
        base = PREFIX + code
        if student is not None:
            known = self._call("hget", base + ":students", student)
            if known is not None:
                return Student(student, json.loads(known)["nickname"])
        if self._call("hlen", base + ":students") >= MAX_STUDENTS:
            raise ClassError(f"this class is full ({MAX_STUDENTS} students)")
        taken = {n.decode() for n in self._call("smembers", base + ":names")}
        name = nickname(taken)
        while not self._call("sadd", base + ":names", name):  # another replica took it
            taken.add(name)
            name = nickname(taken)
        new = Student(student or new_student_id(), name)
        self._call(
            "hset", base + ":students", new.id, json.dumps({"nickname": name, "joined": now})
        )
        self._call("zadd", base + ":seen", {new.id: now})
        for key in self._keys(code)[1:]:
            self._call("expire", key, KEEP_SECONDS)
        return new

    def _seen(self, code: str, student: str, now: float) -> None:
        if self._call("hexists", PREFIX + code + ":students", student):
            self._call("zadd", PREFIX + code + ":seen", {student: now})

    def _answer(self, code: str, student: str, question_id: str, choice: int, now: float) -> bool:
        base = PREFIX + code
        try:
            done = self._answer_script(
                keys=[base, base + ":students", f"{base}:answers:{question_id}"],
                args=[question_id, student, choice, KEEP_SECONDS],
            )
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None
        return bool(done)

    def _choices(self, code: str, question_id: str) -> list[int]:
        values = self._call("hvals", f"{PREFIX}{code}:answers:{question_id}")
        return [int(v) for v in values]

    def _answer_of(self, code: str, student: str, question_id: str) -> int | None:
        value = self._call("hget", f"{PREFIX}{code}:answers:{question_id}", student)
        return None if value is None else int(value)

    def _roster(self, code: str) -> Roster:
        base = PREFIX + code
        joined = self._call("hlen", base + ":students")
        active = self._call("zcount", base + ":seen", time.time() - ACTIVE_SECONDS, "+inf")
        return Roster(int(joined), int(active))
