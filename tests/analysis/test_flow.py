"""Max flow on small graphs whose answer is known by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlens.analysis.flow import layered_capacity, layered_max_flows, max_flow


def test_classic_graph_with_a_cross_edge() -> None:
    cap = np.zeros((4, 4))
    cap[0, 1], cap[0, 2], cap[1, 2], cap[1, 3], cap[2, 3] = 3, 2, 1, 2, 3
    assert max_flow(cap, 0, 3) == pytest.approx(5.0)


def test_flow_needs_a_residual_edge_to_reach_the_optimum() -> None:
    # s=0, t=5: the first shortest path must be partly undone through a residual edge
    cap = np.zeros((6, 6))
    for u, v, c in [(0, 1, 1), (0, 2, 1), (1, 3, 1), (2, 3, 1), (2, 4, 1), (3, 5, 1), (4, 5, 1)]:
        cap[u, v] = c
    assert max_flow(cap, 0, 5) == pytest.approx(2.0)


def test_no_path_means_no_flow() -> None:
    assert max_flow(np.zeros((3, 3)), 0, 2) == 0.0


def test_layered_graph_links_consecutive_layers_only() -> None:
    mixing = np.array([[[1.0, 0.0], [0.5, 0.5]]])  # (1, 2, 2): query 1 reads both keys
    cap = layered_capacity(mixing)
    assert cap.shape == (4, 4)
    assert cap[0, 3] == 0.5 and cap[1, 3] == 0.5 and cap[0, 2] == 1.0 and cap[1, 2] == 0.0
    assert max_flow(cap, 0, 3) == pytest.approx(0.5)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(0, 2**16), st.floats(0.0, 3.0))
def test_all_pairs_layered_flows_match_plain_edmonds_karp(
    L: int, T: int, seed: int, peak: float
) -> None:
    logits = np.random.default_rng(seed).normal(size=(L, T, T)) * peak
    mixing = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)  # (L, T, T)
    cap = layered_capacity(mixing)
    plain = [[max_flow(cap, k, L * T + q) for k in range(T)] for q in range(T)]
    np.testing.assert_allclose(layered_max_flows(mixing), plain, atol=1e-9)


def test_two_layers_sum_the_narrower_edge_of_each_middle_position() -> None:
    rng = np.random.default_rng(3)
    mixing = rng.random((2, 4, 4))
    mixing /= mixing.sum(-1, keepdims=True)
    # paths k → m → q through different m share no edge, so the flow is a sum of minima
    np.testing.assert_allclose(layered_max_flows(mixing), _two_layer(mixing), atol=1e-12)


def _two_layer(mixing: np.ndarray) -> np.ndarray:
    """[q, k] = Σ_m min(capacity k → m, capacity m → q)."""
    T = mixing.shape[-1]
    return np.array(
        [[np.minimum(mixing[0][:, k], mixing[1][q, :]).sum() for k in range(T)] for q in range(T)]
    )
