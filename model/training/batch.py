"""Turning examples into padded tensors with the masks of §3.2.3."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attnlens.model.net.masks import padding_mask, target_mask
from attnlens.model.net.tokenizer import Tokenizer


@dataclass(frozen=True)
class Batch:
    src: torch.Tensor  # (B, S): source ids followed by the end token
    tgt_in: torch.Tensor  # (B, T): start token followed by the target ids
    tgt_out: torch.Tensor  # (B, T): the target ids followed by the end token
    src_mask: torch.Tensor  # (B, 1, S)
    tgt_mask: torch.Tensor  # (B, T, T)


def pad_rows(rows: Sequence[Sequence[int]], pad: int) -> torch.Tensor:
    """Right-pad lists of ids to one length, (B, max_len)."""
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


def source_ids(tok: Tokenizer, text: str) -> list[int]:
    """The encoder input: the tokens, then the end token so the encoder sees the length."""
    return tok.encode(text).ids + [tok.eos_id]


def make_batch(
    tok: Tokenizer, sources: Sequence[str], targets: Sequence[str], device: torch.device
) -> Batch:
    """Padded, masked tensors for teacher-forced training on (source, target) pairs."""
    src = pad_rows([source_ids(tok, s) for s in sources], tok.pad_id).to(device)
    tgt = [tok.encode(t).ids for t in targets]
    tgt_in = pad_rows([[tok.bos_id] + t for t in tgt], tok.pad_id).to(device)
    tgt_out = pad_rows([t + [tok.eos_id] for t in tgt], tok.pad_id).to(device)
    return Batch(
        src, tgt_in, tgt_out, padding_mask(src, tok.pad_id), target_mask(tgt_in, tok.pad_id)
    )
