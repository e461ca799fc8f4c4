"""The strings `reverse` and `sort` read: random characters, runs of a repeated character, digits
only, and windows of real typed text (capitals and punctuation).

Training draws from a mix of these (`StringTask.mix`); the hard suite (`hard_strings`) asks for
the cases people type and uniform random strings rarely hold: long runs, phone numbers, text cut
from sentences the model never saw, the shortest and the longest inputs.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from functools import cached_property

from attnlens.model.training.corpus import MAX_CHARS, load_corpus

# Every printable ASCII character, space included, in code-point order (what `sorted` follows).
PRINTABLE = "".join(sorted(string.ascii_letters + string.digits + string.punctuation + " "))


def random_chars(rng: random.Random, chars: str, n: int) -> str:
    """n characters drawn uniformly from chars."""
    return "".join(rng.choice(chars) for _ in range(n))


def digits(rng: random.Random, n: int) -> str:
    """n digits: a phone number, a PIN, the start of π."""
    return random_chars(rng, string.digits, n)


def runs(rng: random.Random, chars: str, n: int, most: int = 3) -> str:
    """n characters from a pool of one to `most`, in runs of random length: "aaab33ab"."""
    pool = rng.sample(chars, rng.randint(1, most))
    out: list[str] = []
    while len(out) < n:
        out += rng.choice(pool) * rng.randint(1, n)
    return "".join(out[:n])


def with_a_run(rng: random.Random, chars: str, n: int) -> str:
    """n random characters (n ≥ 3) of which a stretch of at least 3 is one repeated character."""
    length = rng.randint(3, n)
    start = rng.randint(0, n - length)
    text = random_chars(rng, chars, n)
    return text[:start] + rng.choice(chars) * length + text[start + length :]


class TypedText:
    """Windows of sentences of Python's help text: capitals, punctuation and spaces as typed.

    Training reads the training sentences of the corpus; the hard suite its held-out ones (the
    same split as the language model `lm`), so the suite's text is text the model never saw.
    """

    @cached_property
    def _sentences(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        corpus = load_corpus()  # about a second: only when a typed window is first asked for
        return corpus.train, corpus.held_out

    def window(self, rng: random.Random, n: int, held_out: bool = False) -> str:
        """n characters of one sentence, starting at the start of a word."""
        pool = [s for s in self._sentences[1 if held_out else 0] if len(s) >= n]
        if not pool:
            raise ValueError(f"typed windows are at most {MAX_CHARS} characters, not {n}")
        while True:
            sentence = rng.choice(pool)
            starts = [0] + [i + 1 for i, c in enumerate(sentence) if c == " "]
            starts = [s for s in starts if s + n <= len(sentence) and sentence[s] != " "]
            if starts:
                start = rng.choice(starts)
                return sentence[start : start + n]


Draw = Callable[[random.Random, int], str]


def hard_strings(
    chars: str, typed: TypedText, min_len: int, max_len: int
) -> dict[str, tuple[Draw, Callable[[random.Random], int]]]:
    """For each kind of the hard suite, how to draw a string and its length."""
    anywhere = _uniform(min_len, max_len)
    return {
        "repeats": (lambda r, n: with_a_run(r, chars, n), _uniform(max(min_len, 3), max_len)),
        "digits": (digits, anywhere),
        "mixed case": (lambda r, n: _with_a_capital(r, typed, n), anywhere),
        "shortest": (lambda r, n: random_chars(r, chars, n), _uniform(min_len, min_len + 1)),
        "longest": (lambda r, n: _any_kind(r, chars, typed, n), _uniform(max_len, max_len)),
    }


def _with_a_capital(rng: random.Random, typed: TypedText, n: int) -> str:
    """A window of held-out text with at least one capital letter in it."""
    while True:
        text = typed.window(rng, n, held_out=True)
        if text != text.lower():
            return text


def _any_kind(rng: random.Random, chars: str, typed: TypedText, n: int) -> str:
    """One of the kinds above, picked at random."""
    kinds: Sequence[Draw] = (
        lambda r, k: random_chars(r, chars, k),
        lambda r, k: runs(r, chars, k),
        digits,
        lambda r, k: typed.window(r, k, held_out=True),
    )
    return rng.choice(kinds)(rng, n)


def _uniform(low: int, high: int) -> Callable[[random.Random], int]:
    return lambda rng: rng.randint(low, high)
