"""A toy English → toy target language, from a small grammar with known word alignments.

The target language puts adjectives after their noun and the verb of a subordinate clause last
("the man says that the dog eats a fish" → "lo om dice ke lo kan un pex manja"); "likes" becomes
two words ("ten gus") and "ice cream" one ("gelo"). Some words have synonyms, drawn with fixed
probabilities, so a source has several right translations. "house" is "kasa" (0.40), "ca dom"
(0.35) or "ca tet" (0.25): word by word, greedy decoding takes "ca" (0.60 > 0.40) and then "dom",
a translation of probability 0.35, while beam search keeps "kasa" alive and finds that it is the
likelier one (0.40): "the cat sees a house".

Tokens are words. Each target word aligns to the source word it translates (to "ice" for
"ice cream"; both words of "ten gus" to "likes"), counted in source words from 0.

Training draws synonyms at random (`sample`). The held-out sets (`examples`) give each source its
reference translation instead: the synonym that greedy decoding of the true distribution picks,
so that exact match measures whether a model learned which translation greedy should give.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from attnlens.model.net.tokenizer import WordTokenizer
from attnlens.model.training.tasks.base import HardSuite, Reading, Task, kind_rng
from attnlens.record.errors import InputError, literal
from attnlens.record.example import Example

Variants = tuple[tuple[str, float], ...]  # (translation, probability), probabilities sum to 1


def one(word: str) -> Variants:
    return ((word, 1.0),)


DETERMINERS = {"the": one("lo"), "a": one("un")}
NOUNS = {
    "dog": one("kan"),
    "cat": one("gat"),
    "bird": one("avi"),
    "man": one("om"),
    "girl": one("nina"),
    "fish": one("pex"),
    "house": (("kasa", 0.40), ("ca dom", 0.35), ("ca tet", 0.25)),
}
ADJECTIVES = {
    "big": (("grom", 0.75), ("gran", 0.25)),
    "small": one("pik"),
    "red": one("ros"),
    "old": (("vek", 0.65), ("antik", 0.35)),
}
INTRANSITIVE = {"sleeps": one("dorm"), "runs": (("kor", 0.7), ("fuj", 0.3))}
TRANSITIVE = {"sees": one("vid"), "eats": one("manja"), "likes": one("ten gus")}
SAYING = {"says": one("dice"), "knows": one("sab")}
THAT = {"that": one("ke")}
MASS = {"ice cream": one("gelo")}
MAX_WORDS = 12  # the longest sentence the grammar makes: 'the big dog says that … eats'
PUNCTUATION = ".,;:!?\"'()"  # dropped from the ends of typed words


@dataclass(frozen=True)
class Unit:
    """One source word (or two, for "ice cream") and the translations it may take."""

    source: str
    variants: Variants


def greedy_choice(variants: Variants) -> str:
    """The translation a word-by-word greedy decoder of this distribution writes."""
    prefix: list[str] = []
    live = [(words.split(" "), p) for words, p in variants]
    while True:
        mass: dict[str, float] = {}
        for words, p in live:
            nxt = words[len(prefix)] if len(words) > len(prefix) else ""  # "" = it ends here
            mass[nxt] = mass.get(nxt, 0.0) + p
        best = max(mass, key=lambda w: mass[w])
        if best == "":
            return " ".join(prefix)
        prefix.append(best)
        live = [(w, p) for w, p in live if w[: len(prefix)] == prefix]


def weighted_choice(variants: Variants, rng: random.Random) -> str:
    """A translation drawn with its probability."""
    words = [w for w, _ in variants]
    return rng.choices(words, [p for _, p in variants])[0]


class TranslateTask(Task):
    """Short English sentences and their toy-language translations."""

    name = "translate"
    description = (
        "Toy English → toy language, word by word: cross-attention reorders adjectives and "
        "clause-final verbs; 'house' is kasa (0.40), 'ca dom' or 'ca tet', so greedy ('ca dom') "
        "and beam ('kasa') disagree: try 'the cat sees a house'."
    )
    max_source_len = MAX_WORDS
    example = "the cat sees a house"  # as it reads it: a first screen without a warning

    @property
    def tokenizer(self) -> WordTokenizer:
        return WordTokenizer(vocabulary())

    def sample(self, rng: random.Random) -> Example:
        return self._example(rng, lambda v: weighted_choice(v, rng))

    def examples(self, n: int, seed: int) -> list[Example]:
        """Held-out examples: the same sources as sample() draws, with reference translations."""
        rng = random.Random(seed)
        return [self._example(rng, greedy_choice) for _ in range(n)]

    def render(
        self, units: Sequence[Unit], order: Sequence[int], pick: Callable[[Variants], str]
    ) -> Example:
        """The example for units in source order, written in target order with pick's synonyms."""
        starts, at = [], 0
        for u in units:
            starts.append(at)
            at += len(u.source.split(" "))
        phrases = [pick(units[i].variants).split(" ") for i in order]
        alignment = [starts[i] for words, i in zip(phrases, order, strict=True) for _ in words]
        target = " ".join(w for words in phrases for w in words)
        return Example(" ".join(u.source for u in units), target, tuple(alignment))

    def _example(self, rng: random.Random, pick: Callable[[Variants], str]) -> Example:
        units, order = self.sentence(rng)
        return self.render(units, order, pick)

    def read(self, text: str) -> Reading:
        """The grammar's words are lower case without punctuation: typed text is read that way,
        and a note says so when that changed anything ("The cat sees a house.")."""
        read = self.words_read(text)
        if not read and text.strip():
            raise InputError(f"text {literal(text)} has no words once punctuation is dropped")
        unread = self.unread_notes(text)
        if read == " ".join(text.split()):
            return Reading(read, unread)
        note = (
            f"{self.name} reads lower-case words without punctuation: {literal(text)} was read as "
            f"{literal(read)}"
        )
        return Reading(read, (note, *unread))

    knows_answers = True

    def why_unread(self, text: str) -> str:
        """The words it does not know, or else that the sentence is outside its grammar."""
        known = set(self.source_words())
        unknown = list(dict.fromkeys(w for w in self.words_read(text).split() if w not in known))
        if unknown:
            verb = "is" if len(unknown) == 1 else "are"
            return f"{', '.join(map(repr, unknown))} {verb} not among the English words it knows"
        return (
            "it is not a sentence of its grammar (a subject, then a verb alone, a verb and an "
            "object, or 'says that' and a clause: 'the cat sees a house')"
        )

    @staticmethod
    def words_read(text: str) -> str:
        """The words of a typed text as the grammar has them: lower case, no punctuation."""
        words = [w.strip(PUNCTUATION).lower() for w in text.split()]
        return " ".join(w for w in words if w)

    @staticmethod
    def source_words() -> tuple[str, ...]:
        """Every English word of the grammar, sorted."""
        lexicons = (DETERMINERS, NOUNS, ADJECTIVES, INTRANSITIVE, TRANSITIVE, SAYING, THAT, MASS)
        return tuple(sorted({w for lexicon in lexicons for s in lexicon for w in s.split(" ")}))

    def reference(self, source: str) -> Example | None:
        """The reference translation (greedy's synonyms) of a sentence of this grammar, as the
        model reads it (`read`)."""
        words = self.words_read(source).split()
        parsed = _Reader(words).sentence() if words else None
        return None if parsed is None else self.render(*parsed, pick=greedy_choice)

    def accepts(self, source: str, output: str) -> bool:
        """Any translation of the sentence is right, whichever synonym stands for each word
        ("house" is kasa, ca dom or ca tet), not only the reference's."""
        parsed = _Reader(self.words_read(source).split()).sentence()
        if parsed is None:
            return False
        units, order = parsed
        return _spelled(output.split(), [units[i].variants for i in order])

    def hard_suite(self, n: int, seed: int) -> HardSuite:
        """A word said twice ("the dog sees the dog"), typed sentences ("The cat sees a
        house."), the shortest sentences (3 words) and the longest (11 or 12)."""
        keep: dict[str, Callable[[Example], bool]] = {
            "repeats": _repeats_a_word,
            "mixed case": lambda e: True,
            "shortest": lambda e: len(e.source.split()) <= 3,
            "longest": lambda e: len(e.source.split()) >= MAX_WORDS - 1,
        }
        suite: HardSuite = {}
        for kind, wanted in keep.items():
            rng = kind_rng(seed, kind)
            found: list[Example] = []
            while len(found) < n:
                e = self._example(rng, greedy_choice)
                if wanted(e):
                    found.append(_typed(e, rng) if kind == "mixed case" else e)
            suite[kind] = found
        return suite

    def sentence(self, rng: random.Random) -> tuple[list[Unit], list[int]]:
        """Units in source order and their target order: a subject, then an intransitive verb,
        a verb and object, or a verb of saying with a verb-final subordinate clause."""
        units: list[Unit] = []
        order = self._noun_phrase(rng, units)
        kind = rng.random()
        if kind < 0.35:
            order += self._add(units, _draw(INTRANSITIVE, rng))
        elif kind < 0.7:
            order += self._add(units, _draw(TRANSITIVE, rng)) + self._noun_phrase(rng, units)
        else:
            order += self._add(units, _draw(SAYING, rng)) + self._add(units, _draw(THAT, rng))
            order += self._subordinate(rng, units)
        return units, order

    def _subordinate(self, rng: random.Random, units: list[Unit]) -> list[int]:
        """Subject, verb and maybe object; the target puts the verb last."""
        subject = self._noun_phrase(rng, units)
        if rng.random() < 0.5:
            return subject + self._add(units, _draw(INTRANSITIVE, rng))
        verb = self._add(units, _draw(TRANSITIVE, rng))
        return subject + self._noun_phrase(rng, units) + verb

    def _noun_phrase(self, rng: random.Random, units: list[Unit]) -> list[int]:
        """'ice cream', or a determiner, maybe an adjective, and a noun: the adjective moves
        after the noun in the target."""
        if rng.random() < 0.1:
            return self._add(units, _draw(MASS, rng))
        det = self._add(units, _draw(DETERMINERS, rng))
        adj = self._add(units, _draw(ADJECTIVES, rng)) if rng.random() < 0.35 else []
        return det + self._add(units, _draw(NOUNS, rng)) + adj

    @staticmethod
    def _add(units: list[Unit], unit: Unit) -> list[int]:
        units.append(unit)
        return [len(units) - 1]


def _repeats_a_word(e: Example) -> bool:
    """Whether a word other than "the" and "a" comes twice."""
    words = [w for w in e.source.split() if w not in DETERMINERS]
    return len(set(words)) < len(words)


def _typed(e: Example, rng: random.Random) -> Example:
    """The sentence as a person might type it: a capital first letter, a word or all of it in
    capitals now and then, and a full stop, "!" or "?" at the end."""
    words = e.source.split()
    if rng.random() < 0.15:
        words = [w.upper() for w in words]
    elif rng.random() < 0.3:
        at = rng.randrange(len(words))
        words[at] = words[at].upper()
    words[0] = words[0][:1].upper() + words[0][1:]
    end = rng.choices([".", "!", "?", ""], [0.6, 0.15, 0.1, 0.15])[0]
    return Example(" ".join(words) + end, e.target, e.alignment)


def _draw(lexicon: dict[str, Variants], rng: random.Random) -> Unit:
    word = rng.choice(sorted(lexicon))
    return Unit(word, lexicon[word])


class _Reader:
    """Reads a sentence back into the units and target order `sentence` would have drawn."""

    def __init__(self, words: list[str]) -> None:
        self.words, self.at, self.units = words, 0, list[Unit]()

    def sentence(self) -> tuple[list[Unit], list[int]] | None:
        subject = self.noun_phrase()
        if subject is None:
            return None
        order: list[int] | None
        if (verb := self.take(INTRANSITIVE)) is not None:
            order = subject + verb
        elif (verb := self.take(TRANSITIVE)) is not None:
            obj = self.noun_phrase()
            order = None if obj is None else subject + verb + obj
        elif (verb := self.take(SAYING)) is not None and (that := self.take(THAT)) is not None:
            clause = self.subordinate()
            order = None if clause is None else subject + verb + that + clause
        else:
            order = None
        return None if order is None or self.at != len(self.words) else (self.units, order)

    def subordinate(self) -> list[int] | None:
        subject = self.noun_phrase()
        if subject is None:
            return None
        if (verb := self.take(INTRANSITIVE)) is not None:
            return subject + verb
        verb = self.take(TRANSITIVE)
        obj = None if verb is None else self.noun_phrase()
        return None if verb is None or obj is None else subject + obj + verb

    def noun_phrase(self) -> list[int] | None:
        if (mass := self.take(MASS)) is not None:
            return mass
        det = self.take(DETERMINERS)
        adj = self.take(ADJECTIVES) if det is not None else None
        noun = self.take(NOUNS) if det is not None else None
        return None if det is None or noun is None else det + noun + (adj or [])

    def take(self, lexicon: dict[str, Variants]) -> list[int] | None:
        """The next word(s) as a unit of lexicon, if they are one."""
        for source, variants in lexicon.items():
            n = len(source.split(" "))
            if self.words[self.at : self.at + n] == source.split(" "):
                self.units.append(Unit(source, variants))
                self.at += n
                return [len(self.units) - 1]
        return None


def _spelled(words: list[str], phrases: list[Variants]) -> bool:
    """Whether words are the phrases in order, each written as one of its variants."""
    if not phrases:
        return not words
    for variant, _ in phrases[0]:
        n = len(variant.split(" "))
        if words[:n] == variant.split(" ") and _spelled(words[n:], phrases[1:]):
            return True
    return False


def vocabulary() -> tuple[str, ...]:
    """Every source and target word the grammar uses, sorted: one vocabulary for both sides."""
    lexicons = (DETERMINERS, NOUNS, ADJECTIVES, INTRANSITIVE, TRANSITIVE, SAYING, THAT, MASS)
    words = set()
    for lexicon in lexicons:
        for source, variants in lexicon.items():
            words.update(source.split(" "))
            words.update(w for target, _ in variants for w in target.split(" "))
    return tuple(sorted(words))
