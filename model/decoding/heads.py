"""Naming attention heads to ablate: `LAYER.HEAD`, or `KIND:LAYER.HEAD` with an explicit kind."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from attnlens.record.errors import InputError

HeadKind = Literal["encoder", "decoder", "cross"]
HEAD_KINDS: tuple[HeadKind, ...] = ("encoder", "decoder", "cross")
ABLATE_HELP = (
    "LAYER.HEAD, counted from 0: on an encoder-decoder model the cross-attention head, on a "
    "decoder-only model the decoder self-attention head; prefix encoder:, decoder: or cross: "
    "to choose the kind (e.g. cross:1.2)"
)
_PATTERN = re.compile(r"^(?:(?P<kind>[a-z]+):)?(?P<layer>\d+)\.(?P<head>\d+)$")


@dataclass(frozen=True, order=True)
class HeadRef:
    """One head of one kind of attention, its output zeroed when ablated (0-based)."""

    kind: HeadKind
    layer: int
    head: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.layer}.{self.head}"


def default_kind(architecture: str) -> HeadKind:
    """The kind a bare LAYER.HEAD means: what the generated token attends through most directly."""
    return "cross" if architecture == "encoder-decoder" else "decoder"


def parse_head(text: str, architecture: str) -> HeadRef:
    """`1.2`, `cross:1.2`, `encoder:0.3` or `decoder:1.0` to a HeadRef (not yet range-checked)."""
    match = _PATTERN.match(text.strip())
    if match is None:
        raise InputError(
            f"head {text!r} is not LAYER.HEAD or KIND:LAYER.HEAD (e.g. 1.2, cross:1.2)"
        )
    kind = match.group("kind") or default_kind(architecture)
    if kind not in HEAD_KINDS:
        raise InputError(f"head {text!r}: kind must be encoder, decoder or cross, got {kind!r}")
    return HeadRef(kind, int(match.group("layer")), int(match.group("head")))  # type: ignore[arg-type]


def check_head(ref: HeadRef, kinds: tuple[HeadKind, ...], n_layers: int, n_heads: int) -> None:
    """Refuse a head the model does not have, naming the model's limits."""
    if ref.kind not in kinds:
        raise InputError(f"head {ref}: this model has no {ref.kind} attention ({', '.join(kinds)})")
    if ref.layer >= n_layers or ref.head >= n_heads:
        raise InputError(
            f"head {ref} does not exist: the model has layers 0-{n_layers - 1} "
            f"and heads 0-{n_heads - 1}"
        )
