"""One layer's overview and row statistics, and each row's exact log-sum-exp, from what its
kernel computed the weights from, a tile at a time (record/summary.py's Summary).

The weights are rebuilt from the queries and keys, pᵢⱼ = exp(scoreᵢⱼ − lseᵢ), one tile at a
time: a few query rows of every head over a span of the keys they reach, about TILE_CELLS
scores (a couple of MB, so each pass over it stays in the core's cache), reduced and dropped:
nothing of T × T is held. Keys a causal or windowed mask cannot reach are not computed (their
weight is exactly 0). Each tile takes a fixed number of operations, each over the whole tile,
into buffers made once per layer.

The same pass makes the row's log-sum-exp exact to float64. The kernel's own is float32 (off by
|lse| · 2⁻²⁴ or so, 2.6e-6 at 44), and pᵢⱼ = exp(scoreᵢⱼ − lseᵢ) rebuilt in float64 is only as
exact as it: so each row's Σⱼ exp(scoreᵢⱼ − lse_kernel) is summed here in float64, and every
overview cell (a block of rows × a block of keys) that holds a weight of at least _sharp_at
(a sharp head's peaks, the keys of short rows: few) is scored again in float64 from the
queries and keys as the kernel read them. The keys left in float32 each weigh less than that,
and their float32 roundings, of both signs, move a row's sum by a few 1e-9 (docs/python.md
states the bound measured).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from attnlens.record.scores import MaskRule
from attnlens.record.summary import edges

OVERVIEW = 128  # at most this many blocks a side: 64 KB a head in float16, max and mean
TILE_CELLS = 1 << 19  # scores in one tile, every head together: 2 MB of float32
SHARP = 5e-2  # a cell holding a weight this large is summed again in float64
SHARP_SCORE = 8.0  # ... a smaller one where |lse| passes this (float32 rounding grows with it)
LOG2E, LN2 = 1 / math.log(2), math.log(2)
MASKED = -1e30  # a masked score: finite, so that 0 · score stays 0 where exp gives 0


@dataclass(frozen=True)
class Scoring:
    """How a layer makes scores of q · k: the scale, Gemma 2's cap, T5's bias by distance
    (H, Q + K − 1, at [h, j − i + Q − 1]) and the mask's rule."""

    scale: float
    rule: MaskRule
    softcap: float | None = None
    bias: torch.Tensor | None = None


@dataclass(frozen=True)
class Pooled:
    """One layer's overview and row statistics, per head, and its rows' exact log-sum-exp."""

    lse: np.ndarray  # (H, Q) float64: log Σⱼ exp(scoreᵢⱼ), scores as float64 sums
    max: np.ndarray  # (H, B_q, B_k) float16: each block's largest weight
    mean: np.ndarray  # (H, B_q, B_k) float16: each block's mean over all its cells
    entropy: np.ndarray  # (H,) float32: mean over rows of −Σⱼ pᵢⱼ ln pᵢⱼ
    distance: np.ndarray  # (H,) float32: mean over rows of Σⱼ pᵢⱼ |i − j|
    # (H, B_q, B_k) float32 with the keys' norms: each block's mean of pᵢⱼ ‖f_h(xⱼ)‖, and its
    # largest; None without
    norm_mean: np.ndarray | None = None
    norm_max: np.ndarray | None = None
    norm_total: np.ndarray | None = None  # (H,) float64: Σᵢ Σⱼ pᵢⱼ ‖f_h(xⱼ)‖ with norms


def pool(
    q: torch.Tensor,
    k: torch.Tensor,
    lse: torch.Tensor,
    scoring: Scoring,
    side: int = OVERVIEW,
    carried: torch.Tensor | None = None,
) -> Pooled:
    """The pooled layer of queries q (H, Q, d) over keys k (H_kv, K, d) whose rows' log-sum-
    exp the kernel gave as lse (H, Q), in at most side × side blocks; any float dtype, any
    device (grouped-query attention: query head h reads key head h // (H / H_kv)). carried:
    ‖f_h(xⱼ)‖ (H, K), each block's mean and largest pᵢⱼ ‖f_h(xⱼ)‖ pooled beside the weights,
    nearly free: the mean from each key's weight summed over the block's rows, the largest
    from each key's largest weight over them (both reductions the weights' overview makes
    anyway), times the key's norm."""
    with torch.inference_mode():
        layer = _Layer(q, k, lse, scoring, side, carried)
        for r0, r1, c0, c1 in layer.tiles():
            layer.tile(r0, r1, c0, c1)
        return layer.result()


class _Layer:
    """One layer's inputs laid out for its tiles, and what the tiles fill."""

    def __init__(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        lse: torch.Tensor,
        scoring: Scoring,
        side: int,
        carried: torch.Tensor | None = None,
    ) -> None:
        H, Q, d = q.shape
        H_kv, K, _ = k.shape
        self.H, self.Q, self.K, self.G, self.d, self.dev = H, Q, K, H // H_kv, d, q.device
        self.scoring, self.rule = scoring, scoring.rule
        self.rows, self.cols = edges(Q, side), edges(K, side)
        self.h, self.w = int(self.rows[1] - self.rows[0]), int(self.cols[1] - self.cols[0])
        self.K_pad = (len(self.cols) - 1) * self.w  # keys padded to whole blocks, masked
        self.q_in, self.k_in = q, k  # as the kernel read them: the float64 cells start here
        self.q = q.float().contiguous().view(H_kv, self.G, Q, d)
        k_pad = torch.nn.functional.pad(k.float(), (0, 0, 0, self.K_pad - K))
        self.kT = k_pad.transpose(1, 2).contiguous()  # (H_kv, d, K_pad)
        self.alpha = scoring.scale * (LOG2E if scoring.softcap is None else 1.0)
        # every score a tile makes is off by this factor (alpha rounded to float32): known, so
        # its first-order share of each row's sum is taken back out (_exact)
        self.drift = 0.0 if scoring.softcap else float(np.float32(self.alpha)) / self.alpha - 1
        lse2 = (lse.double() * LOG2E).float()  # (H, Q) base 2, as the tiles subtract it
        self.lse2 = lse2.view(H_kv, self.G, Q, 1)
        self.lse = lse2.double() * LN2  # natural: what every tile's p is relative to, exactly
        # per row, over every tile: Σ p, Σ p log₂ p, Σ p · j (float64)
        self.mass, self.p_log_p, self.moment = torch.zeros(
            3, H, Q, dtype=torch.float64, device=self.dev
        )
        B_q, B_k = len(self.rows) - 1, len(self.cols) - 1
        self.parts = 1 if carried is None else 2  # the weights' blocks, and the norms' beside
        # each block's largest and summed weight (then pᵢⱼ ‖f(xⱼ)‖'s), stacked: one reduction
        # and one update a tile pools both with
        self.max = torch.zeros(self.parts, H, B_q, B_k, device=self.dev)
        self.sum = torch.zeros(self.parts, H, B_q, B_k, dtype=torch.float64, device=self.dev)
        self.ones = torch.ones(self.w, device=self.dev)
        self.distance = torch.zeros(H, dtype=torch.float64, device=self.dev)  # non-causal
        self.key_pos = torch.arange(self.K_pad, dtype=torch.float32, device=self.dev)
        least = torch.nn.functional.pad(_sharp_at(self.lse), (0, B_q * self.h - Q), value=1.0)
        self.sharp_at = least.view(H, B_q, self.h).amin(-1)  # (H, B_q): per block of rows
        sizes = [(r1 - r0, c1 - c0) for r0, r1, c0, c1 in self.tiles()]
        cells = max(H * R * C for R, C in sizes)
        self.scores = torch.empty(cells, device=self.dev)  # a tile's log₂ p, then p · log₂ p
        self.weights = torch.empty(cells, device=self.dev)  # a tile's p
        # each key's summed weight and its largest over a block's rows (then each times the
        # key's norm), for a tile
        keys = max(H * -(-R // self.h) * C for R, C in sizes)
        self.columns = torch.empty(2 * self.parts * keys, device=self.dev)
        self.sharp: list[tuple[torch.Tensor, ...]] = []  # cells to score again (_exact_total)
        self._norms(carried)

    def _norms(self, carried: torch.Tensor | None) -> None:
        """The keys' norms (H, K_pad) float32, the padded keys' 0 (None without norms)."""
        self.carried = None
        if carried is None:
            return
        if tuple(carried.shape) != (self.H, self.K):
            raise ValueError(f"carried is {tuple(carried.shape)}, the layer's keys ({self.H}, "
                             f"{self.K})")  # fmt: skip
        pad = self.K_pad - self.K
        self.carried = torch.nn.functional.pad(carried.to(self.dev, torch.float32), (0, pad))

    def tiles(self) -> list[tuple[int, int, int, int]]:
        """(r0, r1, c0, c1) of each tile: whole overview blocks of rows (a short last block on
        its own), or rows of one block where one block of rows and keys is already too many,
        over a span of whole key blocks; at most TILE_CELLS scores each."""
        H, h, w, out = self.H, self.h, self.w, []
        rows = h if H * h * w <= TILE_CELLS else max(1, TILE_CELLS // (H * w))
        span = max(w, TILE_CELLS // (H * rows) // w * w)
        if span >= self.K_pad and rows == h:
            rows = h * max(1, TILE_CELLS // (H * h * self.K_pad))
        whole, r0 = self.Q // h * h, 0
        while r0 < self.Q:
            r1 = min(r0 + rows, (r0 // h + 1) * h) if rows < h else min(r0 + rows, whole)
            r1 = r1 if r1 > r0 else self.Q  # the short last block
            lo, hi = self.reach(r0, r1)
            out += [(r0, r1, c0, min(hi, c0 + span)) for c0 in range(lo, hi, span)]
            r0 = r1
        return out

    def reach(self, r0: int, r1: int) -> tuple[int, int]:
        """The keys rows r0..r1-1 may attend to, widened to whole overview blocks."""
        rule, w = self.rule, self.w
        hi = min(self.K, r1 + rule.offset) if rule.causal else self.K
        lo = max(0, r0 + rule.offset - rule.window + 1) if rule.window else 0
        lo, hi = lo // w * w, min(self.K_pad, -(-hi // w) * w)
        return lo, max(hi, lo + w)

    def tile(self, r0: int, r1: int, c0: int, c1: int) -> None:
        """Rows r0..r1-1 of every head over keys c0..c1-1: their weights, pooled."""
        R, C, H_kv, G, n = r1 - r0, c1 - c0, self.kT.size(0), self.G, (c1 - c0) // self.w
        x = self.scores[: self.H * R * C].view(H_kv, G * R, C)
        rows = self.q[:, :, r0:r1].reshape(H_kv, G * R, self.d)
        torch.baddbmm(x, rows, self.kT[:, :, c0:c1], beta=0.0, alpha=self.alpha, out=x)
        x = x.view(H_kv, G, R, C)
        self._shape(x, r0, r1, c0)
        x.sub_(self.lse2[:, :, r0:r1])  # log₂ p
        p = torch.exp2(x, out=self.weights[: x.numel()].view(x.shape))
        if self.rule.causal and self.rule.offset <= 0:  # every key reached at or before i
            self.moment[:, r0:r1] += (p @ self.key_pos[c0:c1]).view(self.H, R)
        else:
            self._distance(p, r0, r1, c0)
        most, total = self._cells(p, r0, r1, c0)  # (parts, H, n_r, n) each
        b0, k0, n_r = r0 // self.h, c0 // self.w, most.size(2)
        at = (slice(None), slice(None), slice(b0, b0 + n_r), slice(k0, k0 + n))
        torch.maximum(self.max[at], most, out=self.max[at])
        self.sum[at] += total
        most = most[0]  # the weights'
        head, part, block = (most >= self.sharp_at[:, b0 : b0 + n_r, None]).nonzero(as_tuple=True)
        if len(head):  # out of the float32 sums below: scored again in float64 (_exact_total)
            p.view(self.H, n_r, R // n_r, n, self.w)[head, part, :, block] = 0.0
            rows_of = part.unsqueeze(-1) * (R // n_r) + torch.arange(R // n_r, device=self.dev)
            self.sharp.append((head, rows_of + r0, block * self.w + c0))
        self.mass[:, r0:r1] += p.sum(-1).view(self.H, R)
        self.p_log_p[:, r0:r1] += x.mul_(p).sum(-1).view(self.H, R)

    def _cells(self, p: torch.Tensor, r0: int, r1: int, c0: int) -> tuple[torch.Tensor, ...]:
        """(parts, H, n_r, n) each, of every overview cell the tile covers: its largest weight
        and its sum of weights, and (with norms) its largest pᵢⱼ ‖f(xⱼ)‖ and its Σ pᵢⱼ ‖f(xⱼ)‖.
        Each key's weight summed, and its largest, over the block's rows (reductions along
        whole rows of the tile) give them all: the norms' from those times the key's norm (the
        largest exact: a product by a norm ≥ 0, rounded, keeps the order), then every part
        reduced over each block's keys at once."""
        R, C, H, w = r1 - r0, p.size(-1), self.H, self.w
        h = min(R, self.h)
        rows = p.view(H, R // h, h, C)
        size = H * (R // h) * C  # of each part
        summed, largest = self.columns[: 2 * self.parts * size].view(2, self.parts, H, -1, C)
        torch.sum(rows, 2, out=summed[0])
        torch.amax(rows, 2, out=largest[0])
        if self.carried is not None:  # (two products: one over both strided took longer)
            keys = self.carried[:, c0 : c0 + C].unsqueeze(1)
            torch.mul(summed[0], keys, out=summed[1])
            torch.mul(largest[0], keys, out=largest[1])
        shape = (self.parts, H, R // h, C // w)
        most = _block_max(largest, w).view(shape)
        return most, torch.mv(summed.view(-1, w), self.ones).view(shape)

    def _shape(self, x: torch.Tensor, r0: int, r1: int, c0: int) -> None:
        """The cap and the bias on a tile of q · k (in base 2 after this), and the mask."""
        s = self.scoring
        if s.softcap is not None:
            x.div_(s.softcap).tanh_().mul_(s.softcap * LOG2E)
        if s.bias is not None:
            at = torch.arange(c0, c0 + x.size(-1), device=self.dev) - torch.arange(
                r0, r1, device=self.dev
            ).unsqueeze(1)  # (R, C): j − i
            at = (at + (self.Q - 1)).clamp_(0, s.bias.size(-1) - 1)  # padded keys: masked
            x.add_(s.bias.float()[:, at].mul_(LOG2E).view(x.shape))
        for lo, hi, blocked in _masked(self.rule, r0, r1, c0, x.size(-1), self.K, self.dev):
            part = x[..., lo:hi]
            part.fill_(MASKED) if blocked is None else part.masked_fill_(blocked, MASKED)

    def _distance(self, p: torch.Tensor, r0: int, r1: int, c0: int) -> None:
        """A tile's share of each head's Σ pᵢⱼ |i − j| where keys may lie after the row."""
        rows = torch.arange(r0, r1, device=self.dev, dtype=torch.float32)
        far = (rows.unsqueeze(-1) - self.key_pos[c0 : c0 + p.size(-1)]).abs_()  # (R, C)
        self.distance += torch.linalg.vecdot(p, far).view(self.H, -1).sum(-1)

    def _exact_total(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(H, Q) float64 each: every row's Σⱼ exp(scoreᵢⱼ − lse) (lse as the tiles subtract
        it), and the Σ p and Σ p ln p of its cells scored again. The float32 weights' sums,
        less the first-order drift of their scores, hold every cell but those holding a weight
        of at least _sharp_at (zeroed in the tiles): each of those is scored again here in
        float64, a few at a time, and its exact sum added."""
        lse2 = self.lse2.view(self.H, -1).double()
        total = self.mass - self.drift * LN2 * (self.p_log_p + self.mass * lse2)
        mass, p_ln_p = torch.zeros_like(total), torch.zeros_like(total)
        if not self.sharp:
            return total, mass, p_ln_p
        widths: dict[int, list[tuple[torch.Tensor, ...]]] = {}  # a short last block's rows
        for part in self.sharp:  # are fewer: cells of each height scored together
            widths.setdefault(part[1].size(1), []).append(part)
        for parts in widths.values():
            head, rows, first = (torch.cat(part) for part in zip(*parts, strict=True))
            self._rescore(head, rows, first, mass, p_ln_p)
        return total + mass, mass, p_ln_p

    def _rescore(
        self,
        head: torch.Tensor,
        rows: torch.Tensor,
        first: torch.Tensor,
        mass: torch.Tensor,
        p_ln_p: torch.Tensor,
    ) -> None:
        """Add the exact Σ p and Σ p ln p of each listed cell (heads (m,), rows (m, r), first
        keys (m,)) to its rows' in mass and p_ln_p (H, Q), a few cells at a time."""
        step = max(1, TILE_CELLS // (rows.size(1) * self.w))
        for i in range(0, len(head), step):
            at = slice(i, i + step)
            cell = (head[at].unsqueeze(-1), rows[at])
            exact = self._float64_cells(head[at], rows[at], first[at])  # (m, h, w)
            exact -= self.lse[cell].unsqueeze(-1)  # ln p
            p64 = exact.exp()
            mass.index_put_(cell, p64.sum(-1), accumulate=True)
            p_ln_p.index_put_(cell, (p64 * exact.nan_to_num(neginf=0.0)).sum(-1), accumulate=True)

    def _float64_cells(
        self, head: torch.Tensor, rows: torch.Tensor, first_key: torch.Tensor
    ) -> torch.Tensor:
        """(m, r, w) float64: the natural scores of each listed head's rows (m, r) over the w
        keys from first_key (m,), from the queries and keys as the kernel read them, masked."""
        s = self.scoring
        keys = first_key.unsqueeze(-1) + torch.arange(self.w, device=self.dev)  # (m, w)
        q = self.q_in[head.unsqueeze(-1), rows].double()  # (m, r, d)
        k = self.k_in[(head // self.G).unsqueeze(-1), keys.clamp(max=self.K - 1)].double()
        x = torch.bmm(q, k.transpose(1, 2)).mul_(s.scale)  # (m, r, w)
        if s.softcap is not None:
            x = x.div_(s.softcap).tanh_().mul_(s.softcap)
        if s.bias is not None:
            at = keys.unsqueeze(1) - rows.unsqueeze(-1) + (self.Q - 1)
            x.add_(s.bias.double()[head.view(-1, 1, 1), at.clamp(0, s.bias.size(-1) - 1)])
        ok = _allowed(self.rule, rows, keys, self.K)  # (m, r, w)
        return x.masked_fill_(~ok, -math.inf)

    def result(self) -> Pooled:
        total, sharp_mass, sharp_p_ln_p = self._exact_total()
        cells = np.outer(np.diff(self.rows), np.diff(self.cols))  # (B_q, B_k)
        distance = self.distance
        if self.rule.causal and self.rule.offset <= 0:
            rows = torch.arange(self.Q, device=self.dev, dtype=torch.float64)
            distance = ((self.mass + sharp_mass) * rows - self.moment).sum(-1)
        p_ln_p = (self.p_log_p * LN2 + sharp_p_ln_p).sum(-1)
        norm_mean, norm_max, norm_total = None, None, None
        if self.carried is not None:  # the sums made means in place: no more fresh pages
            summed = self.sum[1]  # (H, B_q, B_k) float64
            norm_total = summed.sum((1, 2)).cpu().numpy()
            summed.div_(torch.from_numpy(cells.astype(np.float64)).to(self.dev))
            norm_mean = summed.float().cpu().numpy()
            norm_max = self.max[1].cpu().numpy()
        return Pooled(
            lse=(self.lse + total.log()).cpu().numpy(),
            max=self.max[0].cpu().numpy().astype(np.float16),
            mean=(self.sum[0].cpu().numpy() / cells).astype(np.float16),
            entropy=(-p_ln_p / self.Q).float().cpu().numpy(),
            distance=(distance / self.Q).float().cpu().numpy(),
            norm_mean=norm_mean,
            norm_max=norm_max,
            norm_total=norm_total,
        )


def _block_max(x: torch.Tensor, w: int) -> torch.Tensor:
    """(…, C // w): the largest of each w keys of x (…, C), by the kernel that does it faster
    on the CPU: a pooling window for short blocks (amax over a short last axis is 3× slower),
    a reduction for wide ones."""
    C = x.size(-1)
    if w >= 32 or x.device.type != "cpu":
        return x.view(*x.shape[:-1], C // w, w).amax(-1)
    return torch.nn.functional.max_pool1d(x.view(-1, 1, C), w).view(*x.shape[:-1], C // w)


def _sharp_at(lse: torch.Tensor) -> torch.Tensor:
    """The weight from which a cell is summed again in float64: SHARP, smaller where a row's
    scores are large (their float32 rounding grows with them)."""
    size = lse.abs().clamp(min=SHARP_SCORE)
    return (SHARP * (SHARP_SCORE / size) ** 2).float()


def _masked(
    rule: MaskRule, r0: int, r1: int, c0: int, C: int, K: int, dev: torch.device
) -> list[tuple[int, int, torch.Tensor | None]]:
    """The parts of a tile (columns lo..hi-1, local) where some score is masked, each with
    its (R, hi − lo) mask, or None where all are: past the diagonal (causal), before the
    window, the padded keys."""
    R, first, last = r1 - r0, r0 + rule.offset, r1 - 1 + rule.offset  # rows' key positions
    parts: list[tuple[int, int, torch.Tensor | None]] = []
    if rule.causal and c0 + C - 1 > first:  # key j blocked from row i where j > i + offset
        lo = max(0, first + 1 - c0)
        every = torch.ones(R, C - lo, dtype=torch.bool, device=dev)
        parts.append((lo, C, every.triu_(first + 1 - (c0 + lo))))
    if rule.window is not None and last - c0 >= rule.window:  # where i + offset − j ≥ window
        hi = min(C, last - rule.window + 1 - c0)
        every = torch.ones(R, hi, dtype=torch.bool, device=dev)
        parts.append((0, hi, every.tril_(first - rule.window - c0)))
    if c0 + C > K:
        parts.append((max(0, K - c0), C, None))
    return parts


def _allowed(rule: MaskRule, rows: torch.Tensor, keys: torch.Tensor, K: int) -> torch.Tensor:
    """(…, R, n) bool: may query rows[…, i] attend to keys[…, j] (keys from K on: padding)."""
    pos = (rows + rule.offset).unsqueeze(-1)  # (…, R, 1)
    at = keys.unsqueeze(-2)  # (…, 1, n)
    ok = at < K
    if rule.causal:
        ok = ok & (at <= pos)
    if rule.window is not None:
        ok = ok & (pos - at < rule.window)
    return ok
