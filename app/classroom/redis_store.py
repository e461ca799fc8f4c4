"""Classes in Redis, for several attnlens replicas behind one load balancer: every replica sees
the same class. The checks that must not race (answer only the current, unrevealed question; a
join within the class's limits) run inside Redis as Lua scripts.

Redis keeps its data on disk only when told to (docs/deploying.md: appendonly yes, appendfsync
always). Whether it did is checked on every write: the key attnlens:store holds a random token and
a count of writes that only goes up. A Redis restarted empty has no token (or another replica's
new one), one restarted from an old snapshot a smaller count: the write is refused inside Redis,
and this server writes back its copy of every class it served before trying again.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from attnlens.app.classroom.limits import (
    PER_BROWSER,
    ClassError,
    StoreLostError,
    StoreUnavailableError,
    limit_error,
)
from attnlens.app.classroom.names import nickname
from attnlens.app.classroom.redis_scripts import (
    ANSWER,
    CLAIM,
    INSERT,
    JOIN,
    LOST,
    REMOVE,
    UPDATE,
)
from attnlens.app.classroom.state import ClassCopy, ClassState, Member, Roster
from attnlens.app.classroom.store import ACTIVE_SECONDS, KEEP_SECONDS, ClassStore

PREFIX = "attnlens:class:"
STORE = "attnlens:store"  # {token, writes}: which data this is, and how many writes it holds
CHECK_SECONDS = 0.5  # reads look at the token at most this often (every write looks)
ONCE_KEEP_SECONDS = 3600  # a one-time code's record (when it was used) is kept this long


class RedisStore(ClassStore):
    """Keys under attnlens:class:CODE (a hash), …:students, …:seen, …:names, …:clients (joins
    per address and browser), …:removed, …:questions and …:answers:QUESTION; each expires a
    week after the class last changed."""

    def __init__(self, url: str) -> None:
        super().__init__()
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
        self._scripts = {
            name: self._r.register_script(text)
            for name, text in (
                ("insert", INSERT),
                ("update", UPDATE),
                ("join", JOIN),
                ("remove", REMOVE),
                ("answer", ANSWER),
                ("claim", CLAIM),
            )
        }
        self._token: str | None = None  # the store's token as this server last knew it
        self._count = 0  # the most writes this server has seen the store hold
        self._checked = 0.0

    def _call(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """One Redis call; a connection problem becomes a StoreUnavailableError with the URL."""
        try:
            return getattr(self._r, what)(*args, **kwargs)
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None

    def _script(self, name: str, keys: list[str], args: list[Any]) -> list[Any]:
        """A write script behind GUARD: its reply, the write counted; StoreLostError if the
        store is not the one this server wrote to."""
        token = self._token or ""  # none yet: refused as LOST, and the store's is taken then
        try:
            reply = self._scripts[name](keys=[STORE, *keys], args=[token, self._count, *args])
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None
        if int(reply[0]) == LOST:
            raise StoreLostError("Redis lost the class store's data")
        self._count = max(self._count, int(reply[1]))
        return list(reply)

    def ping(self) -> None:
        self._call("ping")
        # the first check takes the store's token (and says if Redis keeps nothing on disk); a
        # later one finds a Redis that came back without its data, and writes it back
        self._recover()

    def _close(self) -> None:
        self._r.close()

    # -- noticing a Redis that lost its data ---------------------------------------------------

    def _check(self, now: bool = False) -> str | None:
        if self._token is None:
            self._adopt()
            self._persistence()
            return None
        if not now and time.monotonic() - self._checked < CHECK_SECONDS:
            return None
        self._checked = time.monotonic()
        token, count = self._call("hmget", STORE, "token", "writes")
        if token is None or token.decode() != self._token:
            return "Redis lost the class store's data (it restarted without it, or was emptied)"
        if int(count or 0) < self._count:
            return f"Redis went back to older data ({int(count or 0)} writes, not {self._count})"
        return None

    def _written(self) -> str | None:
        return None  # every write script checked the token and the count itself (GUARD)

    def _adopt(self) -> None:
        """Take the store's token (a new one when it has none) and its count of writes."""
        self._call("hsetnx", STORE, "token", secrets.token_hex(8))
        token, count = self._call("hmget", STORE, "token", "writes")
        self._token, self._count = token.decode(), int(count or 0)
        self._checked = time.monotonic()

    def _persistence(self) -> None:
        """Tell the teacher when Redis keeps answers in memory only."""
        try:
            info = self._r.info("persistence")
        except self._errors:
            return  # INFO refused (a managed Redis): its own settings apply
        if not int(info.get("aof_enabled", 0)):
            self.notice(
                "Redis keeps the classes in memory only (appendonly is off): if it restarts, "
                "only what this server holds a copy of comes back. Turn on appendonly yes and "
                "appendfsync always (docs/deploying.md)"
            )

    def _reset(self, why: str) -> str:
        self._adopt()
        return ""

    def _dump(self, code: str) -> ClassCopy | None:
        base = PREFIX + code
        head = self._call("hgetall", base)
        if b"teacher" not in head or b"state" not in head:
            return None
        state = ClassState.from_json(head[b"state"].decode(), int(head.get(b"version", 0)))
        copy = ClassCopy(head[b"teacher"].decode(), state)
        for sid, text in self._call("hgetall", base + ":students").items():
            data = json.loads(text)
            copy.members[sid.decode()] = Member(
                sid.decode(),
                data["nickname"],
                data.get("address", ""),
                data.get("browser", ""),
                float(data.get("joined", 0.0)),
            )
        copy.removed = {s.decode() for s in self._call("smembers", base + ":removed")}
        for question in self._call("smembers", base + ":questions"):
            chosen = self._call("hgetall", f"{base}:answers:{question.decode()}")
            copy.answers[question.decode()] = {s.decode(): (int(c), 0.0) for s, c in chosen.items()}
        return copy

    def _put_back(self, code: str, copy: ClassCopy) -> None:
        """What Redis lacks of the copy, written with HSETNX / SADD: what it holds stays."""
        base, now = PREFIX + code, time.time()
        try:
            lacking = [k for k in (base, base + ":clients") if not self._r.exists(k)]
            with self._r.pipeline(transaction=True) as pipe:
                if base in lacking:
                    pipe.hset(
                        base,
                        mapping={
                            "teacher": copy.teacher,
                            "created": now,
                            "state": copy.state.to_json(),
                            "version": copy.state.version + 1,
                        },
                    )
                for m in copy.members.values():
                    pipe.hsetnx(base + ":students", m.id, _member_json(m))
                    pipe.sadd(base + ":names", m.nickname)
                    pipe.zadd(base + ":seen", {m.id: now}, nx=True)
                clients = _client_counts(copy)
                if clients and base + ":clients" in lacking:
                    pipe.hset(base + ":clients", mapping=clients)
                if copy.removed:
                    pipe.sadd(base + ":removed", *copy.removed)
                for question, chosen in copy.answers.items():
                    pipe.sadd(base + ":questions", question)
                    for student, (choice, _) in chosen.items():
                        pipe.hsetnx(f"{base}:answers:{question}", student, choice)
                pipe.hincrby(STORE, "writes", 1)
                pipe.execute()
            for key in self._r.keys(base + "*"):
                self._r.expire(key, KEEP_SECONDS)
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None

    # -- the class ---------------------------------------------------------------------------------

    def _keys(self, code: str) -> list[str]:
        base = PREFIX + code
        return [base, base + ":students", base + ":seen", base + ":names", base + ":clients"]

    def _insert(self, code: str, teacher: str, state: ClassState) -> bool:
        reply = self._script(
            "insert", [PREFIX + code], [teacher, state.to_json(), time.time(), KEEP_SECONDS]
        )
        return int(reply[0]) == 1

    def _state(self, code: str) -> ClassState | None:
        state, version = self._call("hmget", PREFIX + code, "state", "version")
        if state is None:
            return None
        return ClassState.from_json(state.decode(), int(version or 0))

    def _teacher_hash(self, code: str) -> str | None:
        value = self._call("hget", PREFIX + code, "teacher")
        return None if value is None else str(value.decode())

    def _update(self, code: str, state: ClassState) -> ClassState:
        reply = self._script("update", self._keys(code), [state.to_json(), KEEP_SECONDS])
        if int(reply[0]) < 0:
            raise ClassError("this class has ended or expired")
        return state.moved(version=int(reply[0]))

    # -- students ----------------------------------------------------------------------------------

    def _member(self, code: str, student: str) -> Member | None:
        known = self._call("hget", PREFIX + code + ":students", student)
        if known is None:
            return None
        data = json.loads(known)
        return Member(
            student,
            data["nickname"],
            data.get("address", ""),
            data.get("browser", ""),
            float(data.get("joined", 0.0)),
        )

    def _removed(self, code: str, student: str) -> bool:
        return bool(self._call("sismember", PREFIX + code + ":removed", student))

    def _join(self, code: str, member: Member, state: ClassState, limited: bool) -> Member:
        base = PREFIX + code
        keys = [base, *(base + s for s in (":students", ":names", ":clients", ":seen"))]
        taken = {n.decode() for n in self._call("smembers", base + ":names")}
        for _ in range(20):
            new = Member(member.id, nickname(taken), member.address, member.browser, member.joined)
            reply = self._script(
                "join",
                keys,
                [
                    new.id,
                    _member_json(new),
                    new.nickname,
                    state.size,
                    state.per_address,
                    PER_BROWSER,
                    int(limited),
                    new.address,
                    new.browser,
                    new.joined,
                    KEEP_SECONDS,
                ],
            )
            status = int(reply[0])
            if status == -1:
                joined, from_address, from_browser = (int(x) for x in reply[2:5])
                raise ClassError(limit_error(state, joined, from_address, from_browser))
            if status == 2:  # joined a moment ago, from another page
                return self._member(code, member.id) or new
            if status == 1:
                return new
            taken.add(new.nickname)  # another replica took it
        raise ClassError("no free nickname found after 20 tries; try again")

    def _remove(self, code: str, student: str) -> bool:
        base = PREFIX + code
        questions = [q.decode() for q in self._call("smembers", base + ":questions")]
        keys = [
            base + ":students",
            base + ":clients",
            base + ":seen",
            base + ":removed",
            *(f"{base}:answers:{q}" for q in questions),
        ]
        reply = self._script("remove", keys, [student])
        return int(reply[0]) == 1

    def _members(self, code: str) -> list[Member]:
        found = self._call("hgetall", PREFIX + code + ":students")
        return [
            Member(
                sid.decode(),
                data["nickname"],
                data.get("address", ""),
                data.get("browser", ""),
                float(data.get("joined", 0.0)),
            )
            for sid, data in ((s, json.loads(t)) for s, t in found.items())
        ]

    def _seen(self, code: str, student: str, now: float) -> None:
        if self._call("hexists", PREFIX + code + ":students", student):
            self._call("zadd", PREFIX + code + ":seen", {student: now})

    def _roster(self, code: str) -> Roster:
        base = PREFIX + code
        joined = self._call("hlen", base + ":students")
        active = self._call("zcount", base + ":seen", time.time() - ACTIVE_SECONDS, "+inf")
        clients = self._call("hgetall", base + ":clients")
        most = max(
            (int(n) for k, n in clients.items() if k.startswith(b"a:") and k != b"a:"), default=0
        )
        return Roster(int(joined), int(active), most)

    # -- one-time codes for another device of the teacher's (not counted writes: a code lost
    # with the store is made again) ---------------------------------------------------------------

    def _offer(self, code: str, digest: str, expires: float) -> None:
        key = PREFIX + code + ":handover"
        try:
            with self._r.pipeline() as pipe:  # MULTI: the new code whole, or nothing
                pipe.delete(key)
                pipe.hset(key, mapping={"digest": digest, "expires": expires, "wrong": 0})
                pipe.expire(key, ONCE_KEEP_SECONDS)
                pipe.execute()
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None

    def _claim(self, code: str, digest: str, now: float, most_wrong: int) -> bool:
        try:
            taken = self._scripts["claim"](
                keys=[PREFIX + code + ":handover"], args=[digest, repr(now), most_wrong]
            )
        except self._errors as err:
            raise StoreUnavailableError(f"class store {self.url}: {err}") from None
        return int(taken) == 1

    def _claimed(self, code: str) -> float | None:
        used = self._call("hget", PREFIX + code + ":handover", "used")
        return None if used is None else float(used)

    # -- answers -----------------------------------------------------------------------------------

    def _answer(self, code: str, student: str, question_id: str, choice: int, now: float) -> bool:
        base = PREFIX + code
        keys = [base, base + ":students", f"{base}:answers:{question_id}", base + ":questions"]
        reply = self._script("answer", keys, [question_id, student, choice, KEEP_SECONDS])
        return int(reply[0]) == 1

    def _choices(self, code: str, question_id: str) -> list[int]:
        values = self._call("hvals", f"{PREFIX}{code}:answers:{question_id}")
        return [int(v) for v in values]

    def _answer_of(self, code: str, student: str, question_id: str) -> int | None:
        value = self._call("hget", f"{PREFIX}{code}:answers:{question_id}", student)
        return None if value is None else int(value)


def _member_json(m: Member) -> str:
    return json.dumps(
        {"nickname": m.nickname, "joined": m.joined, "address": m.address, "browser": m.browser}
    )


def _client_counts(copy: ClassCopy) -> dict[str, int]:
    """Joins per address and per browser, as the JOIN script counts them."""
    counts: dict[str, int] = {}
    for m in copy.members.values():
        for key in (f"a:{m.address}", f"b:{m.browser}"):
            counts[key] = counts.get(key, 0) + 1
    return counts
