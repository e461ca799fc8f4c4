"""Max flow on small graphs whose answer is known by hand."""

from __future__ import annotations

import numpy as np
import pytest

from viz.flow import layered_capacity, max_flow


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
