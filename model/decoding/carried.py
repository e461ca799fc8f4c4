"""What each key a decoding step's attention read gives each head, ‖f_h(xⱼ)‖ (record/norms.py):
the norms of the cached values through each head's own slice of W^O (model/net/contributions.py).

A key's value never changes once cached, so its norms are taken once, when the step that feeds
it runs, and kept beside the cache: a step costs the norms of its new keys only (d_head² a head
and key, at any length), and beam search picks their rows as it picks the cache's. The memory's
norms (cross-attention) are taken once per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from attnlens.model.net.contributions import head_factors, head_slices, norms_through


@dataclass(frozen=True)
class CarriedNorms:
    """The norms so far of one run's keys, and what takes the next ones (never changed in
    place: each step and reorder returns a new one)."""

    factors: tuple[torch.Tensor, ...]  # per decoder layer: (H, d_head, d_head) R_h of W_O^h
    own: torch.Tensor | None  # (L, B, H, K): the self-attention keys' norms so far
    cross: torch.Tensor | None  # (L, 1 or B, H, S): the memory's, taken once; None: no cross
    cross_factors: tuple[torch.Tensor, ...] = ()  # cross-attention's R_h, per decoder layer

    def grown(self, values: Sequence[torch.Tensor], fresh: bool = False) -> CarriedNorms:
        """With the norms of the newest keys: values per layer (B, H_kv, n, d_head), the last
        n positions the step fed (fresh: every position, the norms so far dropped)."""
        new = stacked_norms(self.factors, values)  # (L, B, H, n)
        if self.own is None or fresh:
            return replace(self, own=new)
        own = self.own.expand(-1, new.size(1), -1, -1)  # one row widened to B
        return replace(self, own=torch.cat([own, new], dim=-1))

    def with_memory(self, values: Sequence[torch.Tensor]) -> CarriedNorms:
        """With the memory's norms, from its values per layer (1 or B, H_kv, S, d_head)."""
        return replace(self, cross=stacked_norms(self.cross_factors, values))

    def rows(self, index: torch.Tensor) -> CarriedNorms:
        """The norms of the hypotheses index (B',) picks, as the cache's rows are picked."""
        own = None if self.own is None else self.own.index_select(1, index)
        cross = self.cross
        if cross is not None and cross.size(1) > 1:  # each row its own source (start_batch)
            cross = cross.index_select(1, index)
        return replace(self, own=own, cross=cross)

    def of_rows(self, rows: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(L, B, H, K) and (L, B, H, S): what a step hands out for its B rows."""
        cross = None if self.cross is None else self.cross.expand(-1, rows, -1, -1)
        own = None if self.own is None else self.own.expand(-1, rows, -1, -1)
        return own, cross


def factors_of(w_os: Sequence[torch.Tensor], heads: int) -> tuple[torch.Tensor, ...]:
    """Each layer's (H, d_head, d_head) R_h from its W^O as nn.Linear stores it (d_model, H·d):
    factored once per run, in float64."""
    return tuple(head_factors(head_slices(w.detach(), heads)) for w in w_os)


def batched_norms(factors: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """(B, H, N) ‖W_O^h v_{g(h), n}‖ of values (B, H_kv, N, d_head), every row at once."""
    B, H_kv, N, d = values.shape
    flat = values.permute(1, 0, 2, 3).reshape(H_kv, B * N, d)  # (H_kv, B·N, d)
    return norms_through(factors, flat).view(-1, B, N).permute(1, 0, 2)


def stacked_norms(factors: Sequence[torch.Tensor], values: Sequence[torch.Tensor]) -> torch.Tensor:
    """(L, B, H, N) float32: every layer's batched_norms."""
    if len(factors) != len(values):
        raise ValueError(f"{len(values)} layers of values for {len(factors)} layers of W^O")
    return torch.stack([batched_norms(f, v) for f, v in zip(factors, values, strict=True)]).float()


def start_norms(
    heads: int,
    own: Sequence[torch.Tensor],
    cross: Sequence[torch.Tensor] = (),
    memory: Sequence[torch.Tensor] = (),
) -> CarriedNorms:
    """A run's norms before its first feed, from each decoder layer's W^O (d_model, H·d) of
    self-attention (own) and of cross-attention (cross, with the memory's values per layer,
    (1 or B, H_kv, S, d), or later by `with_memory`; none for a decoder-only model)."""
    norms = CarriedNorms(factors_of(own, heads), None, None, factors_of(cross, heads))
    return norms.with_memory(memory) if memory else norms
