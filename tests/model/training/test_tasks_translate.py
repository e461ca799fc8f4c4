"""The translate task: grammar, reordering, word alignments, and real ambiguity."""

import random
from dataclasses import replace

import pytest

from attnlens.model.training.tasks.base import Reading
from attnlens.model.training.tasks.translate import (
    ADJECTIVES,
    DETERMINERS,
    INTRANSITIVE,
    MASS,
    MAX_WORDS,
    NOUNS,
    TRANSITIVE,
    TranslateTask,
    Unit,
    Variants,
    greedy_choice,
    weighted_choice,
)
from attnlens.record.errors import InputError
from attnlens.record.example import Example


def _pointed(e: Example) -> list[str]:
    """For each target word, the source word it aligns to."""
    source = e.source.split(" ")
    return [source[i] for i in e.alignment]


def test_lengths_and_vocabulary() -> None:
    task = TranslateTask()
    for e in task.examples(500, seed=0) + [task.sample(random.Random(i)) for i in range(300)]:
        assert len(e.source.split(" ")) <= MAX_WORDS == task.max_source_len
        assert len(e.alignment) == len(e.target.split(" ")) == task.tokenizer.count(e.target)
        assert all(0 <= i < len(e.source.split(" ")) for i in e.alignment)
        assert not task.tokenizer.encode(e.source + " " + e.target).unknown


def test_the_vocabulary_is_one_token_per_word_of_either_language() -> None:
    tok = TranslateTask().tokenizer
    assert {"house", "ice", "cream", "kasa", "ca", "dom", "ten", "gus"} <= set(tok.words)
    assert tok.encode("the cat sees a house").tokens == ["the", "cat", "sees", "a", "house"]
    assert tok.decode(tok.encode("lo gat vid un kasa").ids) == "lo gat vid un kasa"


def test_every_target_word_points_at_the_source_word_it_translates() -> None:
    lexicon = {**NOUNS, **ADJECTIVES, "the": (("lo", 1.0),), "a": (("un", 1.0),)}
    lexicon |= {"likes": (("ten gus", 1.0),), "ice": (("gelo", 1.0),)}
    for e in TranslateTask().examples(500, seed=1):
        pointed = _pointed(e)
        for word, source in zip(e.target.split(" "), pointed, strict=True):
            if source in lexicon:
                assert any(word in w.split(" ") for w, _ in lexicon[source]), (e, pointed)


def test_render_reorders_and_aligns() -> None:
    units = _units("the big dog sleeps")
    e = TranslateTask().render(units, [0, 2, 1, 3], pick=greedy_choice)
    assert e.target == "lo kan grom dorm"
    assert e.alignment == (0, 2, 1, 3)  # "kan" ← "dog", "grom" ← "big"


def test_adjectives_follow_their_noun() -> None:
    seen = 0
    for e in TranslateTask().examples(500, seed=4):
        source = e.source.split(" ")
        for i, word in enumerate(source[:-1]):
            if word in ADJECTIVES:  # the noun is source word i + 1
                first_of_noun = e.alignment.index(i + 1)
                noun_words = e.alignment.count(i + 1)
                assert e.alignment.index(i) == first_of_noun + noun_words, e
                seen += 1
    assert seen > 50


def test_subordinate_clauses_end_on_their_verb() -> None:
    verbs = set(INTRANSITIVE) | set(TRANSITIVE)
    seen = 0
    for e in TranslateTask().examples(500, seed=5):
        if " that " in e.source:
            pointed = _pointed(e)
            last_verb = [w for w in e.source.split(" ") if w in verbs][-1]
            assert pointed[-1] == last_verb
            seen += 1
    assert seen > 50


def test_likes_is_two_words_and_ice_cream_one() -> None:
    units = _units("a man likes ice cream")
    e = TranslateTask().render(units, [0, 1, 2, 3], pick=greedy_choice)
    assert e.target == "un om ten gus gelo"
    assert e.alignment == (0, 1, 2, 2, 3)  # "ten gus" ← "likes", "gelo" ← "ice"


def test_ambiguity_gives_several_translations_of_one_source() -> None:
    task = TranslateTask()
    units = _units("the old house sleeps")
    rng = random.Random(0)
    targets = {
        task.render(units, [0, 2, 1, 3], lambda v: weighted_choice(v, rng)).target
        for _ in range(200)
    }
    assert len(targets) >= 4
    assert {"lo kasa vek dorm", "lo ca dom antik dorm", "lo ca tet vek dorm"} <= targets


def test_greedy_and_most_probable_translations_of_house_differ() -> None:
    house: Variants = NOUNS["house"]
    assert greedy_choice(house) == "ca dom"  # "ca" 0.60 beats "kasa" 0.40, then "dom" 0.35/0.60
    best, p = max(house, key=lambda v: v[1])
    assert best == "kasa" and p > dict(house)["ca dom"]
    assert greedy_choice(ADJECTIVES["big"]) == "grom"


def test_sampled_synonyms_follow_their_probabilities() -> None:
    rng = random.Random(0)
    draws = [weighted_choice(NOUNS["house"], rng) for _ in range(5000)]
    assert abs(draws.count("kasa") / 5000 - 0.40) < 0.03
    assert abs(draws.count("ca tet") / 5000 - 0.25) < 0.03


def test_held_out_examples_use_reference_translations() -> None:
    for e in TranslateTask().examples(300, seed=3):
        words = e.target.split(" ")
        assert not {"kasa", "tet", "gran", "antik", "fuj"} & set(words), e.target


def _units(sentence: str) -> list[Unit]:
    """The units of a sentence, word by word from the lexicon ("ice cream" is one unit)."""
    lexicon = {**DETERMINERS, **NOUNS, **ADJECTIVES, **INTRANSITIVE, **TRANSITIVE, **MASS}
    words = sentence.replace("ice cream", "ice_cream").split(" ")
    return [Unit(w.replace("_", " "), lexicon[w.replace("_", " ")]) for w in words]


def test_reference_reads_back_every_generated_sentence() -> None:
    task = TranslateTask()
    for e in task.examples(1000, seed=6):
        assert task.reference(e.source) == e
    assert task.reference("  the cat\tsleeps ") == task.reference("the cat sleeps")


@pytest.mark.parametrize(
    "text",
    ["", "the cat", "cat sleeps", "the cat sleeps a", "The cat sleeps a", "the cat sees", "?!"],
)
def test_reference_is_none_outside_the_grammar(text: str) -> None:
    assert TranslateTask().reference(text) is None


def test_typed_text_is_read_lower_case_without_punctuation_and_says_so() -> None:
    task = TranslateTask()
    reading = task.read('The CAT sees "a" house!')
    assert reading.text == "the cat sees a house"
    assert reading.notes == (
        "translate reads lower-case words without punctuation: 'The CAT sees \"a\" house!' "
        "was read as 'the cat sees a house'",
    )
    assert task.read("the  cat\tsleeps") == Reading("the cat sleeps")  # spacing says nothing
    assert task.reference("The cat sees a house.") == task.reference("the cat sees a house")
    with pytest.raises(InputError, match="no words once punctuation is dropped"):
        task.read("... !")


def test_the_hard_suite_holds_what_each_kind_promises() -> None:
    task = TranslateTask()
    suite = task.hard_suite(80, seed=1)
    assert list(suite) == ["repeats", "mixed case", "shortest", "longest"]
    for examples in suite.values():
        assert len(examples) == 80
        assert all(task.reference(e.source) == replace(e, source=task.read(e.source).text)
                   for e in examples)  # fmt: skip
    for e in suite["repeats"]:  # a word other than "the" and "a" comes twice
        words = [w for w in e.source.split() if w not in DETERMINERS]
        assert len(set(words)) < len(words), e.source
    assert all(task.read(e.source).notes for e in suite["mixed case"])  # each one typed
    assert all(len(e.source.split()) == 3 for e in suite["shortest"])
    assert all(len(e.source.split()) >= MAX_WORDS - 1 for e in suite["longest"])
