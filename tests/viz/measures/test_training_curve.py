"""The training curve: loss on the left, snapshot scores on the right, the shown step marked."""

from __future__ import annotations

import pytest

from attnlens.viz.measures.training_curve import training_curve

SCORES = {"exact match": [0.0, 0.5, 0.99], "best head aligned": [0.2, 0.9, 1.0]}


def test_one_line_for_the_loss_and_one_per_score() -> None:
    fig = training_curve([1, 11, 21], [3.0, 2.0, 1.0], [10, 100, 1000], SCORES, current_step=100)
    names = [t.name for t in fig.data]
    assert names == ["loss", "exact match", "best head aligned"]
    assert list(fig.data[1].x) == [10, 100, 1000] and list(fig.data[2].y) == [0.2, 0.9, 1.0]
    assert fig.data[0].xaxis == "x" and fig.data[1].xaxis == "x2"
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(lines) == 2 and {s.x0 for s in lines} == {100}
    assert fig.layout.xaxis.type == fig.layout.xaxis2.type == "log"
    assert "step 100 marked" in fig.layout.title.text


def test_without_a_current_step_nothing_is_marked() -> None:
    fig = training_curve([1, 2], [1.0, 0.5], [], {})
    assert not fig.layout.shapes and len(fig.data) == 1


def test_without_scores_the_loss_stands_alone() -> None:
    """A model with no task (the language model): no empty score panel."""
    fig = training_curve([1, 11], [3.0, 1.0], [10], {}, current_step=10)
    assert [a.text for a in fig.layout.annotations] == ["training loss (one batch per point)"]
    assert "xaxis2" not in fig.layout.to_plotly_json()
    assert len([s for s in fig.layout.shapes if s.type == "line"]) == 1


@pytest.mark.parametrize(
    "args",
    [
        ([1, 2], [1.0], [10], {}),
        ([1], [1.0], [10, 20], {"exact match": [0.5]}),
    ],
)
def test_lengths_that_do_not_match_are_refused(args: tuple) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError):
        training_curve(*args)
