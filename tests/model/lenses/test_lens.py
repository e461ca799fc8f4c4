"""The lens of our own models: input checks and what a trace without a target does."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnlens import InputError, ModelNotFoundError, load
from attnlens.model.lenses.registry import is_own_bundled
from attnlens.model.net import checkpoint
from attnlens.model.net.tokenizer import WordTokenizer
from helpers.parts import task
from helpers.tiny import tiny_transformer


def test_empty_and_too_long_text_are_refused(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError, match="empty"):
        lens.trace("")
    with pytest.raises(InputError, match=r"30 characters .* at most 23"):
        lens.trace("a" * 30)


def test_unknown_characters_and_long_inputs_warn(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    tr = lens.trace("aXa", target="a")
    assert tr.src_tokens == ("a", "<unk>", "a", "</s>")
    assert any("'X'" in w for w in tr.warnings)
    assert any("trained on at most 12" in w for w in lens.trace("a" * 13, target="a").warnings)


def test_trace_without_target_follows_the_greedy_output(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    tr = lens.trace("abc")
    assert tr.tgt_tokens[0] == "<s>"
    assert tr.tgt_logprobs is not None
    again = lens.trace("abc", target="".join(tr.tgt_tokens[1:]))
    assert again.equals(tr)


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(ModelNotFoundError, match="no model 'no-such-model'"):
        load("no-such-model")


def test_a_name_no_file_system_can_hold_is_no_model_not_an_os_error() -> None:
    """Typed into the sidebar, a 300-letter name showed "[Errno 36] File name too long" and the
    whole name twice; the limit is in bytes, so 200 é (400 bytes) is too long as well."""
    with pytest.raises(ModelNotFoundError, match=r"at most 255 bytes, and one of its names is 300"):
        load("a" * 300)
    with pytest.raises(ModelNotFoundError, match=r"\(202 characters\).* is 400$"):
        load("x/" + "é" * 200)
    assert not is_own_bundled("a" * 300)


WORDS = ("the", "cat", "dog", "sees", "a", "lo", "gat", "kan", "vid")


@pytest.fixture(scope="module")
def word_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random network with a word tokenizer (9 words, like TINY_CHARS' 9 characters)."""
    folder = tmp_path_factory.mktemp("tiny-words")
    meta = {"name": "words", "max_source_len": 5, "task": "translate"}
    checkpoint.save(folder, tiny_transformer(), WordTokenizer(WORDS), meta)
    return folder


def test_word_models_count_and_show_words(word_model_dir: Path) -> None:
    lens = load(str(word_model_dir), device="cpu")
    tr = lens.trace("the  cat sees\ta dog", target="lo gat vid")
    assert tr.src_tokens == ("the", "cat", "sees", "a", "dog", "</s>")
    assert tr.tgt_tokens == ("<s>", "lo", "gat", "vid")
    assert tr.cross is not None and tr.cross.shape[-2:] == (4, 6)
    run = lens.decode("the cat", max_len=4)
    assert run.output_text == " ".join(
        t for t in run.output_tokens if t in WORDS
    )  # specials dropped
    assert lens.example == "the cat sees a house"  # the example of its task, read as typed
    assert lens.text_of(("lo", "gat", "<unk>", "vid", "</s>", "kan")) == "lo gat vid"
    assert lens.text_of(run.output_tokens) == run.output_text


def test_word_models_name_unknown_words_and_limits_in_words(word_model_dir: Path) -> None:
    lens = load(str(word_model_dir), device="cpu")
    tr = lens.trace("the cow sees", target="lo")
    assert tr.src_tokens[1] == "<unk>"
    assert any("words outside the vocabulary" in w and "'cow'" in w for w in tr.warnings)
    assert any("trained on at most 5 words" in w for w in lens.trace("a " * 6, "lo").warnings)
    with pytest.raises(InputError, match="type at least one word"):
        lens.trace("  \t ")
    with pytest.raises(InputError, match=r"text has 30 words .* at most 23"):
        lens.trace("a " * 30)


def test_a_translate_model_reads_typed_text_lower_cased_and_says_so(word_model_dir: Path) -> None:
    """The record holds the tokens the model read; the warning names what was typed."""
    lens = load(str(word_model_dir), device="cpu")
    typed = 'The CAT sees "a" dog!'
    tr = lens.trace(typed, target="lo gat")
    assert tr.src_tokens == ("the", "cat", "sees", "a", "dog", "</s>")
    note = f"reads lower-case words without punctuation: {typed!r} was read as 'the cat sees a dog'"
    assert any(note in w for w in tr.warnings), tr.warnings
    run = lens.decode(typed, max_len=3)
    assert run.src_tokens == tr.src_tokens and any(note in w for w in run.warnings)
    assert lens.trace("the cat sees a dog", target="lo").warnings == ()  # nothing to say
    assert task(lens).reference("The cat sleeps.") == task(lens).reference("the cat sleeps")
    with pytest.raises(InputError, match="has no words once punctuation is dropped"):
        lens.trace("?!")


def test_unknown_words_are_quoted_one_by_one(word_model_dir: Path) -> None:
    """Quoted together, 'cow moo' read as one word the model lacks."""
    tr = load(str(word_model_dir), device="cpu").trace("the cow moo", target="lo")
    assert any("read as <unk>: 'cow', 'moo'" in w for w in tr.warnings)


def test_typed_special_token_names_are_named_one_by_one(word_model_dir: Path) -> None:
    lens = load(str(word_model_dir), device="cpu")
    one = lens.trace("the </s> cow", target="lo").warnings
    assert any(w.startswith("text: '</s>' typed, a special token's name;") for w in one)
    two = lens.trace("the <s> cow </s>", target="lo").warnings
    assert any(w.startswith("text: '<s>', '</s>' typed, special tokens' names;") for w in two)
