"""Every head's overview and statistics at trace time (model/lenses/summaries.py), against the
same numbers read off the dense weights, on layers long enough that an overview block holds
many rows and keys (and, on a cross layer, rows and keys of different widths)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlens.model.lenses.summaries import summarise
from attnlens.record.scores import LayerScores, MaskRule


def _layer(
    rng: np.random.Generator, H: int, H_kv: int, Q: int, K: int, rule: MaskRule
) -> LayerScores:
    q = rng.standard_normal((H, Q, 8)).astype(np.float32)
    k = rng.standard_normal((H_kv, K, 8)).astype(np.float32)
    scores = torch.from_numpy(q) @ torch.from_numpy(k).repeat_interleave(H // H_kv, 0).mT * 0.7
    allowed = rule.allowed(np.arange(Q), np.arange(K))
    if allowed is not None:
        scores.masked_fill_(~torch.from_numpy(allowed), float("-inf"))
    return LayerScores(q, k, torch.logsumexp(scores, -1).numpy(), 0.7, rule)


def _dense(layer: LayerScores) -> np.ndarray:
    return np.stack([layer.weights(h) for h in range(layer.n_heads)]).astype(np.float64)


@pytest.mark.parametrize(
    ("Q", "K", "rule"),
    [
        (300, 300, MaskRule(True)),
        (300, 300, MaskRule(True, 40)),
        (300, 170, MaskRule()),
        (400, 130, MaskRule(offset=-270)),  # a cross layer, its output 3 times its input
    ],
)
def test_each_overview_block_is_the_max_and_mean_of_its_exact_weights(
    Q: int, K: int, rule: MaskRule
) -> None:
    rng = np.random.default_rng(3)
    layers = [_layer(rng, 4, 2, Q, K, rule) for _ in range(2)]
    summary, _ = summarise(layers, [])
    r, c = summary.row_edges, summary.col_edges
    assert np.diff(r)[0] > 1 and np.diff(c)[0] > 1 and r[-1] == Q and c[-1] == K
    for i, layer in enumerate(layers):
        dense = _dense(layer)  # (H, Q, K)
        for a in range(len(r) - 1):
            block = dense[:, r[a] : r[a + 1]]
            most = np.maximum.reduceat(block.max(1), c[:-1], axis=-1)  # (H, B_k)
            mean = np.add.reduceat(block.sum(1), c[:-1], axis=-1) / (np.diff(r)[a] * np.diff(c))
            assert np.allclose(summary.overview_max[i, :, a], most, rtol=2e-3, atol=1e-4), a
            assert np.allclose(summary.overview_mean[i, :, a], mean, rtol=2e-3, atol=1e-5), a
        p = dense
        logs = np.log(np.where(p > 0, p, 1.0))
        entropy = -(p * logs).sum(-1).mean(-1)
        distance = (p * np.abs(np.arange(Q)[:, None] - np.arange(K))).sum(-1).mean(-1)
        assert np.allclose(summary.entropy[i], entropy, atol=1e-5)
        assert np.allclose(summary.distance[i], distance, rtol=1e-5)
        assert np.allclose(summary.first[i], p[:, :, 0].mean(-1), atol=1e-6)
        for field, shift in (("own", 0), ("previous", -1)):  # keys at i + offset + shift
            rows = np.arange(Q)
            keys = rows + rule.offset + shift
            there = (keys >= 0) & (keys < K)
            want = p[:, rows[there], keys[there]].mean(-1)
            assert np.allclose(getattr(summary, field)[i], want, atol=1e-6), field


def test_sharp_cells_in_a_short_last_block_are_scored_again_with_the_rest() -> None:
    """1,001 rows in blocks of 8: the last block holds one row, and sharp cells (scores past
    ±40) fall in it and in whole blocks alike; each row's log-sum-exp stays exact."""
    rng = np.random.default_rng(4)
    q = (rng.standard_normal((2, 1001, 8)) * 9).astype(np.float32)
    k = rng.standard_normal((2, 40, 8)).astype(np.float32)
    s = torch.from_numpy(q).double() @ torch.from_numpy(k).double().mT * 0.7
    assert s.abs().max() > 40
    layer = LayerScores(q, k, torch.logsumexp(s, -1).numpy(), 0.7, MaskRule())
    summary, (exact,) = summarise([layer], [])
    assert np.diff(summary.row_edges)[-1] == 1
    np.testing.assert_allclose(exact.lse, torch.logsumexp(s, -1).numpy(), rtol=0, atol=1e-7)
