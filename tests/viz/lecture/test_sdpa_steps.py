"""The five steps of scaled dot-product attention, checked against the formula and torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlens.viz.lecture.sdpa_steps import (
    STEP_TITLES,
    attention_steps,
    furthest_allowed,
    step_figure,
    strongest_key,
)


def qkv(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 4))


def test_steps_follow_the_formula() -> None:
    q, k, v = qkv()
    mask = np.tril(np.ones((3, 5), dtype=bool))
    s = attention_steps(q, k, v, mask)
    np.testing.assert_allclose(s.scores, q @ k.T)
    np.testing.assert_allclose(s.scaled, q @ k.T / 2.0)  # √d_k = 2
    assert np.isneginf(s.masked[0, 1]) and s.weights[0, 1] == 0.0
    np.testing.assert_allclose(s.weights.sum(1), 1.0)
    np.testing.assert_allclose(s.output, s.weights @ v)


def test_weights_match_torch() -> None:
    torch = pytest.importorskip("torch")
    q, k, v = qkv(1)
    expected = torch.softmax(torch.tensor(q @ k.T / math.sqrt(4)), dim=-1).numpy()
    np.testing.assert_allclose(attention_steps(q, k, v).weights, expected, atol=1e-12)


def test_shapes_that_do_not_fit_are_named() -> None:
    q, k, v = qkv()
    with pytest.raises(ValueError, match="do not fit"):
        attention_steps(q, k[:, :3], v)


def test_figure_writes_every_number_and_minus_infinity() -> None:
    q, k, v = qkv()
    s = attention_steps(q, k, v, np.tril(np.ones((3, 5), dtype=bool)))
    fig = step_figure(s, "masked", list("abc"), list("vwxyz"))
    text = np.asarray(fig.data[0].text)
    assert text.shape == (3, 5) and text[0, 1] == "−∞" and text[0, 0] == f"{s.masked[0, 0]:.3f}"
    assert fig.data[0].x[0] == "0 · v" and fig.layout.title.text == STEP_TITLES["masked"]
    out = step_figure(s, "output", list("abc"), list("vwxyz"))
    assert list(out.data[0].x) == ["dim 0", "dim 1", "dim 2", "dim 3"]
    with pytest.raises(ValueError, match="step must be one of"):
        step_figure(s, "logits", list("abc"), list("vwxyz"))


def test_token_labels_are_escaped() -> None:
    q, k, v = qkv()
    fig = step_figure(attention_steps(q, k, v), "weights", ["<b>", "x", "y"], list("vwxyz"))
    assert fig.data[0].y[0] == "0 · &lt;b&gt;"


def test_answers_to_predictions() -> None:
    weights = np.array([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]])
    assert strongest_key(weights, 0) == 1 and strongest_key(weights, 1) == 0
    mask = np.tril(np.ones((3, 3), dtype=bool))
    assert [furthest_allowed(mask, i) for i in range(3)] == [0, 1, 2]
    assert furthest_allowed(np.zeros((1, 2), dtype=bool), 0) == -1
