"""Sampling: the top-k and top-p filters on known distributions, seeds, and top-k = 1."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from attnlens import load
from attnlens.model.decoding.sampling import Sampling, top_k_filter, top_p_filter

PROBS = torch.tensor([[0.05, 0.5, 0.15, 0.3]])  # sorted: 0.5 (1), 0.3 (3), 0.15 (2), 0.05 (0)


def kept(logits: torch.Tensor) -> set[int]:
    return {i for i, v in enumerate(logits[0].tolist()) if v != float("-inf")}


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (0.3, {1}),  # 0.5 alone reaches 0.3
        (0.5, {1}),  # exactly reached by the first token: the tail starts after it
        (0.51, {1, 3}),
        (0.75, {1, 3}),
        (0.81, {1, 3, 2}),
        (0.96, {1, 3, 2, 0}),
        (1.0, {1, 3, 2, 0}),
    ],
)
def test_top_p_keeps_the_smallest_head_reaching_p_and_drops_exactly_the_tail(
    p: float, expected: set[int]
) -> None:
    logits = PROBS.log()
    filtered = top_p_filter(logits, p)
    assert kept(filtered) == expected
    for i in expected:  # what is kept is untouched
        assert filtered[0, i] == logits[0, i]


def test_top_p_filters_each_row_on_its_own() -> None:
    logits = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]).log()
    filtered = top_p_filter(logits, 0.8)
    assert torch.isinf(filtered).tolist() == [[False, False, True], [True, False, False]]


def test_top_k_keeps_the_k_highest() -> None:
    assert kept(top_k_filter(PROBS.log(), 2)) == {1, 3}
    assert kept(top_k_filter(PROBS.log(), 1)) == {1}
    assert kept(top_k_filter(PROBS.log(), 10)) == {0, 1, 2, 3}


def test_temperature_then_filters_give_the_sampled_distribution() -> None:
    s = Sampling(2.0, top_k=3, top_p=None, seed=0)
    dist = s.distribution(PROBS.log())[0]
    tempered = PROBS[0] ** 0.5 * torch.tensor([0.0, 1, 1, 1])
    assert torch.allclose(dist, tempered / tempered.sum(), atol=1e-6)
    assert math.isclose(float(dist.sum()), 1.0, abs_tol=1e-6)


def test_same_seed_reproduces_and_other_seeds_vary(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    runs = [lens.decode("abcd", strategy="sample", seed=7, temperature=2.0) for _ in range(2)]
    assert runs[0].equals(runs[1])
    others = {lens.decode("abcd", strategy="sample", seed=s, temperature=2.0).output_tokens
              for s in range(8)}  # fmt: skip
    assert len(others) > 1


def test_top_k_1_sampling_is_greedy(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    for text in ("abc", "hgfe", "a b"):
        greedy = lens.decode(text)
        sampled = lens.decode(text, strategy="sample", top_k=1, seed=3, temperature=5.0)
        assert sampled.output_tokens == greedy.output_tokens
        assert sampled.score == greedy.score
