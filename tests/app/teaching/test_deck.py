"""Decks: a lecture as a text file; every problem names the file, slide, line and field."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from attnlens.app.teaching.deck import (
    BUNDLED_DECKS,
    CANNOT_OPEN,
    FIGURES,
    MAX_BYTES,
    DeckError,
    Library,
    parse_deck,
    read_file,
    read_folder,
    read_library,
    read_text,
)

T = TypeVar("T")

GOOD = """title: Heads
model: reverse

=== Where does it look?
section: 3.2.1
figure: heatmap
kind: encoder_self
layer: last
head: auto
ask: where

Guess **first**.

=== The end
figure: title
"""


def test_a_deck_reads_its_fields_slides_and_words() -> None:
    deck = parse_deck(GOOD, "heads")
    assert (deck.title, deck.model, len(deck.slides)) == ("Heads", "reverse", 2)
    first = deck.slides[0]
    assert (first.number, first.title, first.line, first.figure) == (
        1,
        "Where does it look?",
        4,
        "heatmap",
    )
    assert (first.kind, first.layer, first.head, first.ask) == (
        "encoder_self",
        "last",
        "auto",
        "where",
    )
    assert first.words == "Guess **first**."
    assert deck.slides[1].figure == "title" and deck.slides[1].words == ""


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            ("figure: heatmap", "figure: heatmapp"),
            "slide 1 ('Where does it look?', line 4), field 'figure': must be one of",
        ),
        (
            ("layer: last", "layer: two"),
            "field 'layer': must be a whole number from 0 or first or last, got 'two' (line 8)",
        ),
        (("head: auto", "head: -1"), "field 'head': must be in 0 up, got -1"),
        (
            ("kind: encoder_self", "kind: self"),
            "field 'kind': must be one of encoder_self, decoder_self, cross",
        ),
        (
            ("ask: where", "ask: greedy-next"),
            "field 'ask': 'greedy-next' is asked on a figure among softmax, decoding, "
            "not 'heatmap'",
        ),
        (("section: 3.2.1", "sektion: 3.2.1"), "field 'sektion': unknown field (line 5"),
        (("section: 3.2.1", "head: 1"), "field 'head': given twice"),
        (("figure: heatmap\n", ""), "field 'figure': missing"),
        (
            ("figure: title\n", "temperature: 0\n"),
            "slide 2 ('The end', line 14), field 'temperature': must be above 0.0",
        ),
        (
            ("model: reverse", "modell: reverse"),
            "before the first slide, field 'modell': unknown field",
        ),
        (("kind: encoder_self", "just some words"), "line 7: expected 'field: value' here"),
    ],
)
def test_a_bad_deck_names_the_slide_line_and_field(change: tuple[str, str], says: str) -> None:
    with pytest.raises(DeckError) as err:
        parse_deck(GOOD.replace(*change, 1), "heads")
    assert str(err.value).startswith("heads.deck")
    assert says in str(err.value)


def test_decks_without_slides_or_with_bad_names_are_refused() -> None:
    with pytest.raises(DeckError, match="no slides"):
        parse_deck("title: x\n", "empty")
    with pytest.raises(DeckError, match="needs a title"):
        parse_deck("===\nfigure: title\n", "untitled")
    with pytest.raises(DeckError, match="lower-case letters"):
        parse_deck(GOOD, "My Deck")


def test_a_folder_loads_its_good_decks_and_names_each_bad_one(tmp_path: Path) -> None:
    (tmp_path / "good.deck").write_text(GOOD)
    (tmp_path / "bad.deck").write_text(GOOD.replace("layer: last", "layer: 1.5"))
    (tmp_path / "huge.deck").write_text("x" * 300_000)
    (tmp_path / "section3.deck").write_text(GOOD)  # the bundled deck's name
    (tmp_path / "notes.txt").write_text("not a deck")
    library = read_folder(tmp_path, read_folder(BUNDLED_DECKS))
    assert set(library.decks) == {"section3", "good"}
    assert library.decks["section3"].source.startswith(str(BUNDLED_DECKS))  # not overwritten
    messages = "\n".join(library.errors.values())
    assert "bad.deck: slide 1" in messages and "field 'layer'" in messages
    assert "at most 256000" in messages and "already read from" in messages
    shown = "\n".join(library.unopened.values())  # what a visitor sees: names, no paths
    assert f"bad.deck: {CANNOT_OPEN}" in shown and str(tmp_path) not in shown
    missing = read_folder(tmp_path / "nowhere")
    assert not missing.decks and "does not exist" in next(iter(missing.errors.values()))


def test_the_bundled_deck_follows_section_3_then_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ATTNLENS_DECKS", raising=False)
    library = read_library()
    assert not library.errors
    deck = library.decks["section3"]
    sections = [s.section for s in deck.slides]
    assert sections[0] == "3.1" and "3.2.1" in sections and "3.2.2" in sections
    assert "3.2.3" in sections and "decoding" in sections
    assert {s.figure for s in deck.slides} >= set(FIGURES) - {"title", "heatmap"}
    assert all(s.words for s in deck.slides)


def test_teachers_decks_come_from_the_folders_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine.deck").write_text(GOOD)
    monkeypatch.setenv("ATTNLENS_DECKS", str(tmp_path))
    assert set(read_library().decks) == {"section3", "mine"}


def within(seconds: float, call: Callable[[], T]) -> T:
    """call's result, or a failed test when it has not returned in time (a FIFO opened for
    reading waits for a writer forever: the thread is left behind, the test run goes on)."""
    done: list[T] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as err:  # handed to the test's thread
            raised.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still reading after {seconds} s"
    if raised:
        raise raised[0]
    return done[0]


def test_a_fifo_or_a_link_out_of_the_folder_is_refused_unread(tmp_path: Path) -> None:
    decks, outside = tmp_path / "decks", tmp_path / "elsewhere"
    decks.mkdir(), outside.mkdir()
    (decks / "good.deck").write_text(GOOD)
    os.mkfifo(decks / "pipe.deck")
    (outside / "shadow").write_text("root:$6$secret:19000:0:99999:7:::\n")
    (decks / "shadow.deck").symlink_to(outside / "shadow")
    (decks / "zero.deck").symlink_to("/dev/zero")
    (decks / "nowhere.deck").symlink_to(outside / "missing")
    (decks / "loop.deck").symlink_to("loop.deck")
    (decks / "folder.deck").mkdir()
    (decks / "inside.deck").symlink_to("good.deck")  # a link inside the folder is a deck
    library: Library = within(10, lambda: read_folder(decks))
    assert set(library.decks) == {"good", "inside"}
    why = {Path(f).name: m for f, m in library.errors.items()}
    assert "a FIFO (named pipe), not a regular file" in why["pipe.deck"]
    assert "outside the decks folder" in why["shadow.deck"] and "outside" in why["zero.deck"]
    assert "cannot be followed" in why["nowhere.deck"] and "loop of links" in why["loop.deck"]
    assert "a folder, not a regular file" in why["folder.deck"]
    assert all(str(decks / name) in m for name, m in why.items())  # the terminal: the file
    assert not [m for m in why.values() if "$6$secret" in m]  # never its text
    assert sorted(library.unopened.values()) == [f"{n}: {CANNOT_OPEN}" for n in sorted(why)]


def test_a_device_is_refused_and_a_deck_is_counted_as_it_is_read(tmp_path: Path) -> None:
    with pytest.raises(DeckError, match="/dev/zero: a character device, not a regular file"):
        within(10, lambda: read_file(Path("/dev/zero")))
    big = tmp_path / "big.deck"
    big.write_text(GOOD + "x" * MAX_BYTES)
    with pytest.raises(DeckError, match=f"more than {MAX_BYTES} bytes"):
        read_text(big, tmp_path)
    (tmp_path / "latin.deck").write_bytes(b"title: caf\xe9\n")
    with pytest.raises(DeckError, match=r"latin.deck: not UTF-8 text \(byte 10\)"):
        read_text(tmp_path / "latin.deck", tmp_path)
