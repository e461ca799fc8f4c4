"""Join codes, teacher keys, student ids and nicknames: random, short where people type them.

A student id is issued by the server and signed for its class (docs/teaching.md, "What a class
promises"): a made-up `me=` in the right shape is refused, and an id the server gave out is
recognised even by a store that lost it (it is put back from the server's copy). A teacher pass
is signed the same way: what a browser that took the class over with a one-time code holds in
its cookie in place of the key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no I, L, O, 0, 1: nothing to misread
CODE_LENGTH = 6
CODE = re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")
STUDENT = re.compile(r"^[A-Za-z0-9_-]{16}$|^[A-Za-z0-9_-]{23}$")  # unsigned (before) or signed
TOKEN_CHARS = 12  # the random part of a signed id; the 11 after it are its signature
ONCE_LENGTH = 8  # a one-time code handing the class to another device: 31**8, about 8.5e11
ADJECTIVES = (
    "Amber",
    "Brave",
    "Calm",
    "Clever",
    "Curious",
    "Daring",
    "Eager",
    "Gentle",
    "Golden",
    "Happy",
    "Humble",
    "Jolly",
    "Keen",
    "Kind",
    "Lively",
    "Lucky",
    "Merry",
    "Mighty",
    "Nimble",
    "Patient",
    "Polite",
    "Quick",
    "Quiet",
    "Rapid",
    "Shy",
    "Silver",
    "Steady",
    "Sunny",
    "Swift",
    "Tidy",
    "Witty",
    "Zesty",
)
ANIMALS = (
    "Badger",
    "Beaver",
    "Bison",
    "Crane",
    "Dolphin",
    "Falcon",
    "Ferret",
    "Finch",
    "Gecko",
    "Heron",
    "Ibis",
    "Koala",
    "Lemur",
    "Lynx",
    "Marten",
    "Moose",
    "Newt",
    "Otter",
    "Owl",
    "Panda",
    "Puffin",
    "Quokka",
    "Raven",
    "Robin",
    "Seal",
    "Stork",
    "Tapir",
    "Toucan",
    "Walrus",
    "Wombat",
    "Yak",
    "Zebra",
)


def new_code() -> str:
    """A join code a class can read off a projector and type on a phone."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(text: str) -> str:
    """A code as typed (any case, spaces, dashes) in its stored form; '' if it cannot be one."""
    code = re.sub(r"[\s-]", "", text).upper()
    return code if CODE.match(code) else ""


def new_key() -> str:
    """The teacher's key: unguessable, carried only by the teacher's link."""
    return secrets.token_urlsafe(18)


def key_hash(key: str) -> str:
    """What the store keeps of a teacher key (never the key itself)."""
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def key_matches(key: str | None, stored_hash: str) -> bool:
    return bool(key) and hmac.compare_digest(key_hash(key or ""), stored_hash)


def new_once() -> str:
    """A one-time code the teacher types on another device (no 0/O, 1/I/L to misread)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(ONCE_LENGTH))


def normal_once(text: object) -> str:
    """A one-time code as typed (any case, spaces, dashes) in its stored form; '' if it
    cannot be one."""
    if not isinstance(text, str) or len(text) > 40:
        return ""
    once = re.sub(r"[\s-]", "", text).upper()
    return once if len(once) == ONCE_LENGTH and all(c in CODE_ALPHABET for c in once) else ""


def once_digest(code: str, once: str) -> str:
    """What the store keeps of a one-time code (never the code itself)."""
    return hashlib.sha256(f"hand-over:{code}:{once}".encode()).hexdigest()


def _pass_signature(code: str, token: str, teacher_hash: str) -> str:
    mac = hmac.new(teacher_hash.encode(), f"teacher:{code}:{token}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:16]).decode().rstrip("=")


def teacher_pass(code: str, teacher_hash: str) -> str:
    """A pass that moves class `code` as its key does, signed by the server (a token, a dot,
    128 bits of signature): only a server holding the class's teacher hash makes one."""
    token = secrets.token_urlsafe(12)
    return f"{token}.{_pass_signature(code, token, teacher_hash)}"


def pass_matches(given: str | None, code: str, teacher_hash: str) -> bool:
    """Whether `given` is a pass this server signed for class `code`."""
    token, dot, signature = (given or "")[:80].partition(".")
    if not dot or not token or not signature:
        return False
    return hmac.compare_digest(signature, _pass_signature(code, token, teacher_hash))


def _signature(code: str, token: str, teacher_hash: str) -> str:
    """11 URL-safe characters (64 bits) only a server holding the class's teacher hash can
    compute: the hash never leaves the store, and the teacher's key never reaches it."""
    mac = hmac.new(teacher_hash.encode(), f"student:{code}:{token}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:8]).decode().rstrip("=")


def new_student_id(code: str, teacher_hash: str) -> str:
    """A student id of class `code`, signed by the server (23 URL-safe characters)."""
    token = secrets.token_urlsafe(9)  # 12 characters
    return token + _signature(code, token, teacher_hash)


def signed_for(student: str, code: str, teacher_hash: str) -> bool:
    """Whether this server gave `student` out for class `code`."""
    if not valid_student_id(student) or len(student) != TOKEN_CHARS + 11:
        return False
    token, signature = student[:TOKEN_CHARS], student[TOKEN_CHARS:]
    return hmac.compare_digest(signature, _signature(code, token, teacher_hash))


def valid_student_id(text: object) -> bool:
    return isinstance(text, str) and bool(STUDENT.match(text))


def client_key(*parts: str | None) -> str:
    """What the store keeps of a student's address or browser: a short hash, never the
    address itself (enough to count joins from one client, nothing to read back)."""
    text = "\x1f".join(p or "" for p in parts)
    return hashlib.sha256(f"attnlens-client:{text}".encode("utf-8", "replace")).hexdigest()[:16]


def nickname(taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A random "Adjective Animal", with a number when every one tried is taken."""
    for _ in range(20):
        name = f"{secrets.choice(ADJECTIVES)} {secrets.choice(ANIMALS)}"
        if name not in taken:
            return name
    return f"{secrets.choice(ADJECTIVES)} {secrets.choice(ANIMALS)} {secrets.randbelow(10_000)}"
