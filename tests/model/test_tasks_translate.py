"""The translate task: grammar, reordering, word alignments, and real ambiguity."""

import random

from model.tasks.translate import (
    ADJECTIVES,
    DETERMINERS,
    INTRANSITIVE,
    MASS,
    MAX_CHARS,
    NOUNS,
    TRANSITIVE,
    TranslateTask,
    Unit,
    Variants,
    greedy_choice,
    weighted_choice,
)


def _words_with_alignment(source: str, target: str, alignment: tuple[int, ...]) -> list[str]:
    """For each target word, the source word its first character points at."""
    out, at = [], 0
    for word in target.split(" "):
        start = alignment[at]
        assert all(a == start for a in alignment[at : at + len(word)]), (source, target)
        out.append(source[start:].split(" ")[0])
        at += len(word) + 1
    return out


def test_lengths_and_vocabulary() -> None:
    task = TranslateTask()
    for e in task.examples(500, seed=0) + [task.sample(random.Random(i)) for i in range(300)]:
        assert len(e.source) <= MAX_CHARS and len(e.target) <= MAX_CHARS
        assert len(e.alignment) == len(e.target)
        assert not task.tokenizer.encode(e.source + e.target).unknown


def test_every_target_word_points_at_the_source_word_it_translates() -> None:
    lexicon = {**NOUNS, **ADJECTIVES, "the": (("lo", 1.0),), "a": (("un", 1.0),)}
    lexicon |= {"likes": (("ten gus", 1.0),), "ice": (("gelo", 1.0),)}
    for e in TranslateTask().examples(500, seed=1):
        pointed = _words_with_alignment(e.source, e.target, e.alignment)
        translated = " ".join(pointed)
        for word, source in zip(e.target.split(" "), pointed, strict=True):
            if source in lexicon:
                assert any(word in w.split(" ") for w, _ in lexicon[source]), (e, translated)


def test_spaces_align_with_the_word_they_end() -> None:
    for e in TranslateTask().examples(200, seed=2):
        for i, ch in enumerate(e.target):
            if ch == " ":
                assert e.alignment[i] == e.alignment[i - 1]


def test_render_reorders_and_aligns() -> None:
    units = _units("the big dog sleeps")
    e = TranslateTask().render(units, [0, 2, 1, 3], pick=greedy_choice)
    assert e.target == "lo kan grom dorm"
    assert e.alignment[:4] == (0, 0, 0, 8)  # "lo " ← "the", "kan" ← "dog"
    assert e.alignment[7] == 4  # "grom" ← "big"


def test_adjectives_follow_their_noun() -> None:
    seen = 0
    for e in TranslateTask().examples(500, seed=4):
        starts = _word_starts(e.target, e.alignment)
        src, at = e.source.split(" "), 0
        for word in src[:-1]:
            if word in ADJECTIVES:
                noun_at = at + len(word) + 1
                assert starts.index(at) == starts.index(noun_at) + 1, e
                seen += 1
            at += len(word) + 1
    assert seen > 50


def _word_starts(target: str, alignment: tuple[int, ...]) -> list[int]:
    """The source position each target word aligns to."""
    out, at = [], 0
    for word in target.split(" "):
        out.append(alignment[at])
        at += len(word) + 1
    return out


def test_subordinate_clauses_end_on_their_verb() -> None:
    verbs = set(INTRANSITIVE) | set(TRANSITIVE)
    seen = 0
    for e in TranslateTask().examples(500, seed=5):
        if " that " in e.source:
            pointed = _words_with_alignment(e.source, e.target, e.alignment)
            last_verb = [w for w in e.source.split(" ") if w in verbs][-1]
            assert pointed[-1] == last_verb
            seen += 1
    assert seen > 50


def test_likes_is_two_words_and_ice_cream_one() -> None:
    units = _units("a man likes ice cream")
    e = TranslateTask().render(units, [0, 1, 2, 3], pick=greedy_choice)
    assert e.target == "un om ten gus gelo"
    assert set(e.alignment[6:13]) == {e.source.index("likes")}
    assert set(e.alignment[-4:]) == {e.source.index("ice")}


def test_ambiguity_gives_several_translations_of_one_source() -> None:
    task = TranslateTask()
    units = _units("the old house sleeps")
    rng = random.Random(0)
    targets = {
        task.render(units, [0, 2, 1, 3], lambda v: weighted_choice(v, rng)).target
        for _ in range(200)
    }
    assert len(targets) >= 4
    assert {"lo kasa vek dorm", "lo dom antik dorm", "lo domu vek dorm"} <= targets


def test_greedy_and_most_probable_translations_of_house_differ() -> None:
    house: Variants = NOUNS["house"]
    assert greedy_choice(house) == "dom"
    assert max(house, key=lambda v: v[1])[0] == "kasa"
    assert greedy_choice(ADJECTIVES["big"]) == "grom"


def test_sampled_synonyms_follow_their_probabilities() -> None:
    rng = random.Random(0)
    draws = [weighted_choice(NOUNS["house"], rng) for _ in range(5000)]
    assert abs(draws.count("kasa") / 5000 - 0.40) < 0.03


def test_held_out_examples_use_reference_translations() -> None:
    for e in TranslateTask().examples(300, seed=3):
        words = e.target.split(" ")
        assert "kasa" not in words and "domu" not in words and "gran" not in words


def _units(sentence: str) -> list[Unit]:
    """The units of a sentence, word by word from the lexicon ("ice cream" is one unit)."""
    lexicon = {**DETERMINERS, **NOUNS, **ADJECTIVES, **INTRANSITIVE, **TRANSITIVE, **MASS}
    words = sentence.replace("ice cream", "ice_cream").split(" ")
    return [Unit(w.replace("_", " "), lexicon[w.replace("_", " ")]) for w in words]
