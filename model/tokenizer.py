"""A character tokenizer with the four special tokens every bundled model uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)


@dataclass(frozen=True)
class Encoding:
    """Token ids of one text, with the characters that fell outside the vocabulary."""

    ids: list[int]
    tokens: list[str]
    unknown: list[str]


@dataclass(frozen=True)
class CharTokenizer:
    """One token per character; ids 0-3 are <pad>, <s>, </s>, <unk>."""

    chars: str
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.chars)) != len(self.chars):
            raise ValueError("tokenizer characters must be distinct")
        vocab = {tok: i for i, tok in enumerate(SPECIALS)}
        vocab.update({ch: len(SPECIALS) + i for i, ch in enumerate(self.chars)})
        object.__setattr__(self, "index", vocab)

    @property
    def vocab(self) -> list[str]:
        return list(SPECIALS) + list(self.chars)

    def __len__(self) -> int:
        return len(SPECIALS) + len(self.chars)

    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def encode(self, text: str) -> Encoding:
        """Characters to ids; a character outside the vocabulary becomes <unk>."""
        ids = [self.index.get(ch, self.unk_id) for ch in text]
        unknown = [ch for ch in text if ch not in self.index]
        return Encoding(ids, [self.token(i) if i != self.unk_id else UNK for i in ids], unknown)

    def token(self, i: int) -> str:
        return SPECIALS[i] if i < len(SPECIALS) else self.chars[i - len(SPECIALS)]

    def decode(self, ids: list[int]) -> str:
        """Ids back to text, dropping special tokens and stopping at the end token."""
        out = []
        for i in ids:
            if i == self.eos_id:
                break
            if i >= len(SPECIALS):
                out.append(self.chars[i - len(SPECIALS)])
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "char", "chars": self.chars}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CharTokenizer:
        if data.get("kind") != "char":
            raise ValueError(f"unsupported tokenizer kind {data.get('kind')!r}")
        return cls(str(data["chars"]))
