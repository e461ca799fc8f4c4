"""Decks: a lecture as a small text file, one block per slide (docs/teaching.md, "Write a deck").

    title: My lecture            <- the deck's own fields, before the first slide
    model: translate

    === Where does this head look?      <- a slide starts with "=== " and its title
    section: 3.2.1
    figure: heatmap
    kind: encoder_self
    layer: 0
    head: auto
    ask: where
                                 <- a blank line ends the fields
    The words on the slide, Markdown without HTML.

Every problem is a DeckError naming the file, the slide, its line and the field.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from attnlens.app.teaching import deck_values as read
from attnlens.record.errors import InputError, clipped
from attnlens.record.trace import KINDS, Kind

SUFFIX = ".deck"
MAX_BYTES = 256_000
MAX_SLIDES = 200
MAX_WORDS = 6_000  # characters of words on one slide
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
FIGURES: dict[str, str] = {  # name -> what it shows
    "title": "no figure: the words alone",
    "stacks": "Figure 1: the two stacks and where each attention sits (§3.1)",
    "embeddings": "embeddings and positional encoding of this input (§3.4, §3.5)",
    "qkv": "scaled dot-product attention on one head's own Q, K, V (§3.2.1)",
    "scaling": "why divide by √d_k: the softmax saturates as d_k grows (§3.2.1)",
    "heads": "multi-head attention: the same input through each head of a layer (§3.2.2)",
    "causal": "the causal mask built up token by token (§3.2.3)",
    "padding": "padding in a batch: no query attends to a pad (§3.2.3)",
    "cross": "encoder–decoder attention, true sources circled (§3.2.3)",
    "softmax": "the output softmax: the next token's probabilities (§3.4)",
    "decoding": "greedy vs beam search vs sampling with temperature / top-k / top-p",
    "heatmap": "one head's attention: queries × keys",
    "carried": "a weight is not what a head carries: where a head looks, then what it carries "
    "from the special tokens (Kobayashi et al. 2020)",
}
QUESTIONS: dict[str, tuple[str, ...]] = {  # question kind -> figures it may be asked on
    "where": ("qkv", "scaling", "heads", "causal", "cross", "heatmap"),
    "previous-head": ("heads", "heatmap", "causal", "qkv"),
    "alignment-head": ("heads", "heatmap", "cross"),
    "greedy-next": ("softmax", "decoding"),
    "beam-vs-greedy": ("softmax", "decoding"),
    "carried": ("carried", "heatmap"),
}
Auto = str  # "auto", "first" or "last", resolved against the model when the slide is shown


class DeckError(InputError):
    """A deck that cannot be read, with where and why."""


@dataclass(frozen=True)
class Slide:
    """One slide: its figure, the view it opens on and the words beside it."""

    number: int  # 1-based, as the slide counter shows it
    title: str
    line: int
    figure: str = "title"
    section: str = ""
    words: str = ""
    model: str | None = None
    text: str | None = None
    target: str | None = None
    kind: Kind | None = None
    layer: int | Auto | None = None
    head: int | Auto | None = None
    step: int | Auto | None = None
    query: int | Auto | None = None
    ask: str | None = None
    highlight: Kind | None = None
    batch: str | None = None
    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    beam_size: int | None = None


@dataclass(frozen=True)
class Deck:
    """A named lecture: its slides in order and the model they run on unless a slide says."""

    name: str
    title: str
    slides: tuple[Slide, ...]
    model: str | None = None
    text: str | None = None
    about: str = ""
    source: str = ""  # where it was read from


SLIDE_FIELDS: dict[str, Callable[[str], Any]] = {
    "section": read.text,
    "figure": read.one_of(list(FIGURES)),
    "model": read.text,
    "text": read.text,
    "target": read.text,
    "kind": read.one_of(KINDS),
    "layer": read.whole(0, None, ("first", "last")),
    "head": read.whole(0, None, ("auto",)),
    "step": read.whole(0, None, ("auto", "last")),
    "query": read.whole(0, None, ("auto",)),
    "ask": read.one_of(list(QUESTIONS)),
    "highlight": read.one_of(KINDS),
    "batch": read.text,
    "temperature": read.number(0.0, 100.0),
    "top_k": read.whole(1),
    "top_p": read.number(0.0, 1.0),
    "beam_size": read.whole(2, 16),
}
DECK_FIELDS: dict[str, Callable[[str], Any]] = {
    "title": read.text,
    "model": read.text,
    "text": read.text,
    "about": read.text,
}


def parse_deck(text: str, name: str, source: str = "") -> Deck:
    """A deck from its text; a DeckError naming the slide, line and field for any problem."""
    where = source or f"{name}{SUFFIX}"
    if not NAME.match(name):
        raise DeckError(
            f"{where}: a deck's file name must be lower-case letters, digits, - or _ "
            f"(at most 40, it goes in the address), got {name!r}"
        )
    blocks = _blocks(text.splitlines(), where)
    head, slide_blocks = blocks[0], blocks[1:]
    deck_fields = _fields(head[1], DECK_FIELDS, f"{where}, before the first slide")
    if not slide_blocks:
        raise DeckError(f"{where}: no slides (a slide starts with a line '=== Its title')")
    if len(slide_blocks) > MAX_SLIDES:
        raise DeckError(f"{where}: {len(slide_blocks)} slides, at most {MAX_SLIDES}")
    slides = tuple(_slide(i, block, where) for i, block in enumerate(slide_blocks, start=1))
    return Deck(
        name=name,
        title=str(deck_fields.get("title", name)),
        slides=slides,
        model=deck_fields.get("model"),
        text=deck_fields.get("text"),
        about=str(deck_fields.get("about", "")),
        source=where,
    )


Block = tuple[tuple[int, str], list[tuple[int, str]]]  # (line number, title), its lines


def _blocks(lines: list[str], where: str) -> list[Block]:
    """The lines before the first slide, then each slide's title line and lines."""
    blocks: list[Block] = [((0, ""), [])]
    for number, line in enumerate(lines, start=1):
        if line.startswith("==="):
            title = line[3:].strip()
            if not title:
                raise DeckError(f"{where}: line {number}: a slide needs a title after '==='")
            blocks.append(((number, title), []))
        else:
            blocks[-1][1].append((number, line))
    return blocks


def _fields(
    lines: list[tuple[int, str]],
    parsers: dict[str, Callable[[str], Any]],
    place: str,
) -> dict[str, Any]:
    """`name: value` lines up to the first blank line (comments '#' skipped); the rest are
    the words and are returned under the key ''. `place` says where, for messages."""

    def where(name: str) -> str:
        return f"{place}, field '{clipped(name)}'"

    out: dict[str, Any] = {}
    rest = list(lines)
    while rest and not rest[0][1].strip():
        rest.pop(0)
    while rest and rest[0][1].strip():
        number, line = rest.pop(0)
        if line.lstrip().startswith("#"):
            continue
        name, colon, value = line.partition(":")
        name = name.strip().lower().replace("-", "_")
        if not colon or " " in name:
            raise DeckError(
                f"{place}, line {number}: expected 'field: value' here, "
                f"got {clipped(line.strip())!r} (a blank line starts the words)"
            )
        if name not in parsers:
            raise DeckError(
                f"{where(name)}: unknown field (line {number}; fields: {', '.join(parsers)})"
            )
        if name in out:
            raise DeckError(f"{where(name)}: given twice (line {number})")
        try:
            out[name] = parsers[name](value.strip())
        except ValueError as err:
            raise DeckError(f"{where(name)}: {err} (line {number})") from None
    out[""] = "\n".join(line for _, line in rest).strip()
    return out


def _slide(number: int, block: Block, where: str) -> Slide:
    (line, title), lines = block

    place = f"{where}: slide {number} ({title!r}, line {line})"

    def at(name: str) -> str:
        return f"{place}, field '{name}'"

    values = _fields(lines, SLIDE_FIELDS, place)
    words = values.pop("")
    if len(words) > MAX_WORDS:
        raise DeckError(f"{at('words')}: {len(words)} characters, at most {MAX_WORDS}")
    if "figure" not in values:
        raise DeckError(f"{at('figure')}: missing (one of {', '.join(FIGURES)})")
    ask = values.get("ask")
    if ask is not None and values["figure"] not in QUESTIONS[ask]:
        raise DeckError(
            f"{at('ask')}: {ask!r} is asked on a figure among "
            f"{', '.join(QUESTIONS[ask])}, not {values['figure']!r}"
        )
    return Slide(number=number, title=title, line=line, words=words, **values)


def slide_fields() -> tuple[str, ...]:
    """Every field a slide may set (docs/teaching.md lists them)."""
    return tuple(f.name for f in fields(Slide) if f.name in SLIDE_FIELDS)


def renumbered(deck: Deck) -> Deck:
    """The deck with its slides numbered 1..n again (after a filter)."""
    return replace(deck, slides=tuple(replace(s, number=i + 1) for i, s in enumerate(deck.slides)))


CANNOT_OPEN = "this deck cannot be opened"


@dataclass(frozen=True)
class Library:
    """Every deck read at start-up, and each file that could not be read: why, for the terminal
    (`attnlens serve` prints it), and what a visitor is told (its name, no path, no reason)."""

    decks: dict[str, Deck] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # file -> why, with its path
    unopened: dict[str, str] = field(default_factory=dict)  # file -> what the lecture page says


def read_folder(folder: Path, library: Library | None = None) -> Library:
    """Every *.deck file of a folder added to library; a bad file becomes an error message,
    and the other decks still load. A name already taken is refused, not overwritten."""
    library = library or Library()
    decks, errors = dict(library.decks), dict(library.errors)
    unopened = dict(library.unopened)

    def refuse(path: Path, why: str, shown: str) -> None:
        errors[str(path)], unopened[str(path)] = why, shown

    if not folder.is_dir():
        refuse(folder, f"{folder}: the decks folder does not exist or is not a folder",
               "a decks folder cannot be opened")  # fmt: skip
        return Library(decks, errors, unopened)
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        try:
            deck = parse_deck(read_text(path, folder), path.stem, str(path))
        except DeckError as err:
            refuse(path, str(err), f"{path.name}: {CANNOT_OPEN}")
            continue
        if deck.name in decks:
            first = decks[deck.name].source
            why = f"{path}: a deck named {deck.name!r} was already read from {first}; rename it"
            refuse(path, why, f"{path.name}: {CANNOT_OPEN}")
            continue
        decks[deck.name] = deck
    return Library(decks, errors, unopened)


def read_file(path: Path) -> Deck:
    """One deck file of its own folder (see read_text)."""
    return parse_deck(read_text(path, path.parent), path.stem, str(path))


def read_text(path: Path, folder: Path) -> str:
    """A deck's text: a regular file inside folder (a link may point only inside it), at most
    MAX_BYTES of UTF-8, counted as it is read (st_size is 0 for a FIFO or a device). Nothing
    else is opened, so a FIFO cannot hang the server and no other file's text is ever read."""
    try:
        inside = folder.resolve(strict=True)
        target = path.resolve(strict=True)
    except RuntimeError:
        raise DeckError(f"{path}: a loop of links") from None
    except OSError as err:  # a dangling link, a folder that cannot be entered
        raise DeckError(f"{path}: cannot be followed ({_reason(err)})") from None
    if not target.is_relative_to(inside):
        raise DeckError(
            f"{path}: a link to a file outside the decks folder {inside}; a deck must be a file "
            "in the folder"
        )
    try:
        kind = _kind(target.stat().st_mode)
        if kind:
            raise DeckError(f"{path}: {kind}, not a regular file; a deck must be a text file")
        data = _read_at_most(target, MAX_BYTES)
    except OSError as err:
        raise DeckError(f"{path}: cannot be read ({_reason(err)})") from None
    if len(data) > MAX_BYTES:
        raise DeckError(f"{path}: more than {MAX_BYTES} bytes, a deck may hold at most {MAX_BYTES}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DeckError(f"{path}: not UTF-8 text (byte {err.start})") from None


def _read_at_most(path: Path, limit: int) -> bytes:
    """Up to limit + 1 bytes of a regular file, opened without blocking and without following
    a link (the path is already resolved), and checked again once open."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        kind = _kind(os.fstat(fd).st_mode)  # the file may have been swapped since the stat
        if kind:
            raise DeckError(f"{path}: {kind}, not a regular file; a deck must be a text file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(65_536, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    """'' for a regular file, else what the file is."""
    if stat.S_ISREG(mode):
        return ""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"))  # fmt: skip
    return next((name for test, name in kinds if test(mode)), "a special file")


def _reason(err: OSError) -> str:
    """The OS's reason without the path it repeats."""
    return err.strerror or type(err).__name__


BUNDLED_DECKS = Path(__file__).resolve().parent / "decks"
DECKS_ENV = "ATTNLENS_DECKS"


def deck_folders() -> list[Path]:
    """The bundled decks, then every folder in $ATTNLENS_DECKS (os.pathsep-separated), which
    `attnlens serve --decks DIR` sets."""
    extra = [Path(p) for p in os.environ.get(DECKS_ENV, "").split(os.pathsep) if p.strip()]
    return [BUNDLED_DECKS, *extra]


def read_library() -> Library:
    """Every deck of every folder; a bad file is kept as a message, the others load."""
    library = Library()
    for folder in deck_folders():
        library = read_folder(folder, library)
    return library
