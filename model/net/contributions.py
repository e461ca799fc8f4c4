"""What each head carries and writes, not only where it looks (Kobayashi et al. 2020, "Attention
is Not Only a Weight", §3).

A layer's attention output is Σ_h W_O^h o_{h,i} + b_O, and each head's output is o_{h,i} =
Σⱼ αᵢⱼ v_{h,j}, so the layer's output is Σ_h Σⱼ αᵢⱼ f_h(xⱼ) + b_O with f_h(xⱼ) = W_O^h v_{h,j}:
what key j gives head h, carried to the residual stream by the head's own slice W_O^h of the
output projection (d_model × d_head). A key can take much weight and give little: ‖f_h(xⱼ)‖ says
how much.

The norms cost nothing of T²: ‖W_O^h x‖ = ‖R_h x‖ for any R_h (d_head × d_head) with
R_hᵀ R_h = W_O^hᵀ W_O^h (the R of W_O^h = Q_h R_h, Q_h's columns orthonormal), factored once per
layer in float64, then applied as one float32 matrix product per value head (d_head² a position
and head, not d_head · d_model).
Under grouped-query attention, query head h reads value head h // (H / H_kv), through its own
W_O^h.
"""

from __future__ import annotations

import torch

ROWS = 2048  # positions whose norms are taken at once: H × ROWS × d_head numbers


def head_slices(w_o: torch.Tensor, heads: int) -> torch.Tensor:
    """(H, d_model, d_head): each head's W_O^h, from W^O as nn.Linear stores it (d_model, H·d),
    the heads' outputs side by side in its input (§3.2.2: Concat(head_1, …, head_h) W^O)."""
    d_model, width = w_o.shape
    if width % heads:
        raise ValueError(f"W^O reads {width} inputs, which do not split into {heads} heads")
    return w_o.reshape(d_model, heads, width // heads).permute(1, 0, 2)


def head_factors(slices: torch.Tensor) -> torch.Tensor:
    """(H, d_head, d_head) float64: an upper-triangular R_h with R_hᵀ R_h = W_O^hᵀ W_O^h, so
    that ‖W_O^h x‖ = ‖R_h x‖: the transposed Cholesky factor of the heads' Gram matrices, in
    float64 (a third of the time of a QR of W_O^h, 11 ms a layer at GPT-2's width), or where a
    head's W_O^h is rank-deficient (a pruned head: its Gram has no Cholesky factor) the R of
    its QR."""
    d_model, d_head = slices.shape[-2:]
    if d_head > d_model:
        raise ValueError(f"a head {d_head} wide cannot be factored through d_model {d_model}")
    wide = slices.double()
    lower, info = torch.linalg.cholesky_ex(wide.transpose(-1, -2) @ wide)
    factors: torch.Tensor = lower.contiguous().transpose(-1, -2)  # R_hᵀ's rows laid out
    failed = (info != 0).nonzero().flatten()
    if len(failed):
        factors[failed] = torch.linalg.qr(wide[failed], mode="r").R
    return factors


def _grouped(heads: int, x: torch.Tensor) -> int:
    """How many query heads read each of x's heads (grouped-query attention), checked."""
    if heads % x.size(0):
        raise ValueError(f"{heads} query heads do not share {x.size(0)} value heads evenly")
    return heads // x.size(0)


def norms_through(factors: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """(H, N): ‖W_O^h x_{g(h), n}‖ for x (H_x, N, d_head), query head h reading x's head
    g(h) = h // (H / H_x); one matrix product per x head (its query heads' factors side by
    side), ROWS positions at a time, in float32 (float64 where x is), R_h itself exact."""
    H, d = factors.size(0), factors.size(-1)
    group = _grouped(H, x)
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    r_t = factors.transpose(-1, -2).to(dtype)  # (H, d, d): x @ R_hᵀ = (R_h x)ᵀ
    side = r_t.reshape(x.size(0), group, d, d).permute(0, 2, 1, 3).reshape(x.size(0), d, -1)
    out = torch.empty(H, x.size(1), dtype=dtype, device=x.device)
    for start in range(0, x.size(1), ROWS):
        block = x[:, start : start + ROWS].to(dtype)  # (H_x, n, d)
        n = block.size(1)
        mapped = torch.bmm(block, side).view(x.size(0), n, group, d)  # (H_x, n, group, d)
        out[:, start : start + n] = mapped.norm(dim=-1).permute(0, 2, 1).reshape(H, n)
    return out


def head_vectors(slices: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """(H, N, d_model) float64: W_O^h x_{g(h), n} for x (H_x, N, d_head), as norms_through
    pairs them: each head's vectors as they reach the residual stream (for few positions)."""
    H, d_model, d = slices.shape
    group = _grouped(H, x)
    w_t = slices.double().transpose(-1, -2).reshape(x.size(0), group, d, d_model)
    return (x.double().unsqueeze(1) @ w_t).reshape(H, x.size(1), d_model)


def head_outputs(weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """(H, Q, d_head): o_{h,i} = Σⱼ αᵢⱼ v_{g(h), j}, each head's output as §3.2.1 mixes it, from
    weights (H, Q, K) and values (H_kv, K, d_head), in the values' dtype."""
    group = _grouped(weights.size(0), values)
    return weights.to(values.dtype) @ values.repeat_interleave(group, 0)


class KeptFactors:
    """Each layer's heads' factors R_h, taken once and kept for the weights they came from: a
    model's W^O does not change between its traces, and factoring it was half the norms' own
    time at GPT-2's width (3 ms a layer; 11 ms by QR). A factor is taken again where its
    weight is another tensor, or the same one changed in place (its version counter moved).
    One is kept beside each loaded model; it holds L × H × d_head² float64 numbers (1.2 MB for
    GPT-2 small), and its dictionary's updates are single assignments, so that sessions sharing
    it at worst both factor a layer once."""

    def __init__(self) -> None:
        self._kept: dict[object, tuple[tuple[int, ...], torch.Tensor]] = {}

    def of(self, key: object, w_o: torch.Tensor, heads: int) -> torch.Tensor:
        """(H, d_head, d_head): R_h of the `heads` heads of w_o (as nn.Linear stores W^O),
        kept under key (a layer's name)."""
        stamp = (w_o.data_ptr(), w_o._version, *w_o.shape, *w_o.stride(), heads)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        factors = head_factors(head_slices(w_o, heads))
        self._kept[key] = (stamp, factors)
        return factors


def layer_norms(
    w_o: torch.Tensor,
    values: torch.Tensor,
    outputs: torch.Tensor,
    factors: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One layer's (H, K) ‖f_h(xⱼ)‖ = ‖W_O^h v_{g(h),j}‖, what each key gives each head, and
    (H, Q) ‖W_O^h o_{h,i}‖, what each head writes at each query (float32; float64 for float64
    inputs). w_o as nn.Linear stores W^O; values (H_kv, K, d_head) as the attention received
    them; outputs (H, Q, d_head) each head's output as the kernel returned it; factors: w_o's
    heads' R_h where they were taken already (KeptFactors)."""
    if factors is None:
        factors = head_factors(head_slices(w_o, outputs.size(0)))  # (H, d, d)
    return norms_through(factors, values), norms_through(factors, outputs)
