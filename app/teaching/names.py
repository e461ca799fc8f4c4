"""Join codes, teacher keys, student ids and nicknames: random, short where people type them."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no I, L, O, 0, 1: nothing to misread
CODE_LENGTH = 6
CODE = re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")
STUDENT = re.compile(r"^[A-Za-z0-9_-]{16}$")
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


def new_student_id() -> str:
    return secrets.token_urlsafe(12)


def valid_student_id(text: object) -> bool:
    return isinstance(text, str) and bool(STUDENT.match(text))


def nickname(taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A random "Adjective Animal", with a number when every one tried is taken."""
    for _ in range(20):
        name = f"{secrets.choice(ADJECTIVES)} {secrets.choice(ANIMALS)}"
        if name not in taken:
            return name
    return f"{secrets.choice(ADJECTIVES)} {secrets.choice(ANIMALS)} {secrets.randbelow(10_000)}"
