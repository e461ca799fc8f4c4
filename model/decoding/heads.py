"""Naming attention heads to ablate: `LAYER.HEAD`, or `KIND:LAYER.HEAD` with an explicit kind.

A head's kind is its attention's kind as records name it (`encoder_self`, `decoder_self`,
`cross`). `encoder:` and `decoder:`, the names heads had before, are still read: saved decode
records and shared links carry them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attnlens.record.errors import InputError
from attnlens.record.trace import KINDS, Kind, default_kind

OLD_KINDS: dict[str, Kind] = {"encoder": "encoder_self", "decoder": "decoder_self"}  # read only
ABLATE_HELP = (
    "LAYER.HEAD, counted from 0: on an encoder-decoder model the cross-attention head, on a "
    "decoder-only model the decoder self-attention head; prefix encoder_self:, decoder_self: or "
    "cross: to choose the kind (e.g. cross:1.2; the older encoder: and decoder: are read too)"
)
_PATTERN = re.compile(r"^(?:(?P<kind>[a-z_]+):)?(?P<layer>\d+)\.(?P<head>\d+)$")


@dataclass(frozen=True, order=True)
class HeadRef:
    """One head of one kind of attention, its output zeroed when ablated (0-based)."""

    kind: Kind
    layer: int
    head: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.layer}.{self.head}"


def parse_head(text: str, architecture: str) -> HeadRef:
    """`1.2`, `cross:1.2`, `encoder_self:0.3` or `decoder_self:1.0` (or the older `encoder:0.3`,
    `decoder:1.0`) to a HeadRef (not yet range-checked)."""
    match = _PATTERN.match(text.strip())
    if match is None:
        raise InputError(
            f"head {text!r} is not LAYER.HEAD or KIND:LAYER.HEAD (e.g. 1.2, cross:1.2)"
        )
    given = match.group("kind") or default_kind(architecture)
    kind = OLD_KINDS.get(given, given)
    if kind not in KINDS:
        raise InputError(
            f"head {text!r}: kind must be {', '.join(KINDS[:-1])} or {KINDS[-1]}, got {given!r}"
        )
    return HeadRef(kind, int(match.group("layer")), int(match.group("head")))  # type: ignore[arg-type]


def head_name(text: str, architecture: str) -> str:
    """A head's name as attnlens writes it now (`decoder:1.0` → `decoder_self:1.0`); a name
    that does not parse is returned as given, for the caller to refuse."""
    try:
        return str(parse_head(text, architecture))
    except InputError:
        return text


def check_head(ref: HeadRef, kinds: tuple[Kind, ...], n_layers: int, n_heads: int) -> None:
    """Refuse a head the model does not have, naming the model's limits."""
    if ref.kind not in kinds:
        raise InputError(f"head {ref}: this model has no {ref.kind} attention ({', '.join(kinds)})")
    if ref.layer >= n_layers or ref.head >= n_heads:
        raise InputError(
            f"head {ref} does not exist: the model has layers 0-{n_layers - 1} "
            f"and heads 0-{n_heads - 1}"
        )
