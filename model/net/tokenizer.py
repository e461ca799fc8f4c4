"""The tokenizers of our own models: one token per character, or one per word.

Both share the four special tokens (ids 0-3: <pad>, <s>, </s>, <unk>) and differ only in how a
text is cut into pieces and how pieces are joined back. A checkpoint stores its tokenizer as a
small dict (`to_dict`), read back by `tokenizer_from_dict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)


@dataclass(frozen=True)
class Encoding:
    """Token ids of one text, with the pieces that fell outside the vocabulary, and those that
    spell a special token's name (read as <unk> too: typed text never becomes a special token)."""

    ids: list[int]
    tokens: list[str]
    unknown: list[str]
    specials: list[str] = field(default_factory=list)


class Tokenizer(ABC):
    """A fixed vocabulary after the four specials; subclasses say how text is cut and joined."""

    unit: ClassVar[str]  # what one token is, for messages: "character" or "word"
    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3
    index: dict[str, int]

    @property
    @abstractmethod
    def pieces(self) -> tuple[str, ...]:
        """The vocabulary after the specials, in id order."""

    @abstractmethod
    def split(self, text: str) -> list[str]:
        """text cut into the pieces the model reads."""

    @abstractmethod
    def join(self, pieces: Sequence[str]) -> str:
        """Pieces back into text."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """What a checkpoint stores to rebuild this tokenizer."""

    def _build_index(self) -> None:
        if len(set(self.pieces)) != len(self.pieces):
            raise ValueError(f"tokenizer {self.unit}s must be distinct")
        if set(self.pieces) & set(SPECIALS):
            raise ValueError("tokenizer pieces must not repeat the special tokens")
        vocab = {tok: i for i, tok in enumerate(SPECIALS)}
        vocab.update({piece: len(SPECIALS) + i for i, piece in enumerate(self.pieces)})
        object.__setattr__(self, "index", vocab)

    @property
    def vocab(self) -> list[str]:
        return [*SPECIALS, *self.pieces]

    def __len__(self) -> int:
        return len(SPECIALS) + len(self.pieces)

    def count(self, text: str) -> int:
        """How many tokens text becomes (before the model adds its markers)."""
        return len(self.split(text))

    def encode(self, text: str) -> Encoding:
        """Pieces to ids; a piece outside the vocabulary becomes <unk>, and so does a typed
        special token's name ("<pad>", "</s>", …): only the model places special tokens, so
        what a user types is read the same by every pass (a typed <pad> would be masked as
        padding in a teacher-forced trace but attended to while decoding)."""
        pieces = self.split(text)
        ids = [self.unk_id if p in SPECIALS else self.index.get(p, self.unk_id) for p in pieces]
        unknown = [p for p in pieces if p not in self.index]
        specials = [p for p in pieces if p in SPECIALS]
        return Encoding(ids, [self.token(i) for i in ids], unknown, specials)

    def token(self, i: int) -> str:
        return SPECIALS[i] if i < len(SPECIALS) else self.pieces[i - len(SPECIALS)]

    def spell(self, tokens: Sequence[str]) -> str:
        """The text token strings spell, like decode: specials dropped, stopping at the end."""
        return self.decode([self.index.get(t, self.unk_id) for t in tokens])

    def decode(self, ids: Sequence[int]) -> str:
        """Ids back to text, dropping special tokens and stopping at the end token."""
        out = []
        for i in ids:
            if i == self.eos_id:
                break
            if i >= len(SPECIALS):
                out.append(self.pieces[i - len(SPECIALS)])
        return self.join(out)


@dataclass(frozen=True)
class CharTokenizer(Tokenizer):
    """One token per character."""

    chars: str
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    unit: ClassVar[str] = "character"

    def __post_init__(self) -> None:
        self._build_index()

    @property
    def pieces(self) -> tuple[str, ...]:
        return tuple(self.chars)

    def split(self, text: str) -> list[str]:
        return list(text)

    def join(self, pieces: Sequence[str]) -> str:
        return "".join(pieces)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "char", "chars": self.chars}


@dataclass(frozen=True)
class WordTokenizer(Tokenizer):
    """One token per word: text is cut at whitespace and joined with single spaces."""

    words: tuple[str, ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    unit: ClassVar[str] = "word"

    def __post_init__(self) -> None:
        if any(not w or w != "".join(w.split()) for w in self.words):
            raise ValueError("tokenizer words must be non-empty and hold no whitespace")
        self._build_index()

    @property
    def pieces(self) -> tuple[str, ...]:
        return self.words

    def split(self, text: str) -> list[str]:
        return text.split()

    def join(self, pieces: Sequence[str]) -> str:
        return " ".join(pieces)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "word", "words": list(self.words)}


def tokenizer_from_dict(data: dict[str, Any]) -> Tokenizer:
    """The tokenizer a checkpoint describes."""
    if not isinstance(data, dict):
        raise ValueError(f"a tokenizer is a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    if kind == "char":
        chars = data.get("chars")
        if not isinstance(chars, str):
            raise ValueError(f"tokenizer chars must be one string, got {chars!r:.60}")
        return CharTokenizer(chars)
    if kind == "word":
        words = data.get("words")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ValueError(f"tokenizer words must be a list of strings, got {words!r:.60}")
        return WordTokenizer(tuple(words))
    raise ValueError(f"unsupported tokenizer kind {kind!r:.40} (known: 'char', 'word')")
