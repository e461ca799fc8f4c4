"""The weight-against-what-it-carries figures: their bars are the shares they name, each row
summing to 1, and their titles give the marked keys' shares."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.viz.measures.carried import PICKED, carried_view, shares_by_layer


def test_the_two_rows_are_the_weight_and_the_carried_shares() -> None:
    weights = np.array([[0.9, 0.1, 0.0], [0.8, 0.1, 0.1]])  # (Q, K)
    carried = np.array([0.1, 2.0, 1.0])
    fig = carried_view(["[CLS]", "a", "[SEP]"], weights, carried, [0, 2])
    weight, norm = (np.asarray(bar.y) for bar in fig.data)
    assert np.allclose(weight, [0.85, 0.1, 0.05])
    raw = np.array([1.7 * 0.1, 0.2 * 2.0, 0.1 * 1.0])
    assert np.allclose(norm, raw / raw.sum()) and np.isclose(norm.sum(), 1)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0].endswith("90% on the marked keys")
    assert titles[1].endswith(f"{(raw[0] + raw[2]) / raw.sum():.0%} on the marked keys")
    assert list(fig.data[0].marker.line.color) == [PICKED, fig.data[0].marker.color, PICKED]


def test_keys_tokens_and_norms_must_agree() -> None:
    with pytest.raises(ValueError, match="3 keys need 3 tokens and 3 norms"):
        carried_view(["a", "b"], np.ones((1, 3)) / 3, np.ones(3))


def test_the_layers_shares_side_by_side() -> None:
    fig = shares_by_layer(np.array([0.6, 0.5]), np.array([0.1, 0.2]))
    assert [list(b.y) for b in fig.data] == [[0.6, 0.5], [0.1, 0.2]]
    assert list(fig.data[0].x) == ["layer 0", "layer 1"]
    with pytest.raises(ValueError, match="one share per layer"):
        shares_by_layer(np.zeros(2), np.zeros(3))
