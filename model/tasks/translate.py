"""A toy English → toy target language, from a small grammar with known word alignments.

The target language puts adjectives after their noun and the verb of a subordinate clause last
("the man says that the dog eats a fish" → "lo om dice ke lo kan un pex manja"); "likes" becomes
two words ("ten gus") and "ice cream" one ("gelo"). Some words have synonyms, drawn with fixed
probabilities, so a source has several right translations: "house" is "kasa" (0.40), "dom"
(0.36) or "domu" (0.24). Character by character, greedy decoding prefers "d" (0.60 > 0.40) and
ends on "dom", while beam search can find the likelier "kasa" (the bundled model's beam does when
"house" ends the sentence: "the cat sees a house").

Alignment: every character of a target word aligns to the first character of the source word it
translates (of the first word, for "ice cream"); a space aligns like the word it ends, since the
decoder step that writes it is the one deciding that word is complete.

Training draws synonyms at random (`sample`). The held-out sets (`examples`) give each source its
reference translation instead: the synonym that greedy decoding of the true distribution picks,
so that exact match measures whether a model learned which translation greedy should give.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from model.tasks.base import Example, Task

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
    "house": (("kasa", 0.40), ("dom", 0.36), ("domu", 0.24)),
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
MAX_CHARS = 40


@dataclass(frozen=True)
class Unit:
    """One source word (or two, for "ice cream") and the translations it may take."""

    source: str
    variants: Variants


Phrase = list[tuple[int, Unit]]  # units with their source order, listed in target order


def greedy_choice(variants: Variants) -> str:
    """The translation a character-by-character greedy decoder of this distribution writes."""
    prefix, live = "", list(variants)
    while True:
        mass: dict[str, float] = {}
        for word, p in live:
            nxt = word[len(prefix)] if len(word) > len(prefix) else ""  # "" = the word ends
            mass[nxt] = mass.get(nxt, 0.0) + p
        best = max(mass, key=lambda c: mass[c])
        if best == "":
            return prefix
        prefix += best
        live = [(w, p) for w, p in live if w.startswith(prefix)]


def weighted_choice(variants: Variants, rng: random.Random) -> str:
    """A translation drawn with its probability."""
    words = [w for w, _ in variants]
    return rng.choices(words, [p for _, p in variants])[0]


class TranslateTask(Task):
    """Short English sentences and their toy-language translations."""

    name = "translate"
    description = (
        "Toy English → toy language: cross-attention reorders adjectives and clause-final verbs; "
        "'house' is kasa/dom/domu, so greedy ('dom') and beam ('kasa') can disagree: "
        "try 'the cat sees a house'."
    )
    chars = "abcdefghijklmnopqrstuvwxyz "
    max_source_len = MAX_CHARS

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
            at += len(u.source) + 1
        words = [pick(units[i].variants) for i in order]
        alignment: list[int] = []
        for k, (word, i) in enumerate(zip(words, order, strict=True)):
            alignment += [starts[i]] * (len(word) + (k < len(words) - 1))  # with its space
        return Example(" ".join(u.source for u in units), " ".join(words), tuple(alignment))

    def _example(self, rng: random.Random, pick: Callable[[Variants], str]) -> Example:
        while True:
            units, order = self.sentence(rng)
            example = self.render(units, order, pick)
            if max(len(example.source), len(example.target)) <= MAX_CHARS:
                return example

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


def _draw(lexicon: dict[str, Variants], rng: random.Random) -> Unit:
    word = rng.choice(sorted(lexicon))
    return Unit(word, lexicon[word])
