"""The beam tree and the candidate bars, checked on a hand-made two-step beam search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnlens.viz import beam_tree, candidate_bars


def _nodes(fig: object, status: str) -> object:
    return next(t for t in fig.data if t.name == status)  # type: ignore[attr-defined]


def test_nodes_carry_step_and_beam_and_pruned_are_grey(synth: type) -> None:
    fig = beam_tree(synth.beam_run())
    pruned = _nodes(fig, "pruned")
    assert pruned.marker.color == "#c0c0c0"
    assert [list(c) for c in pruned.customdata] == [[0, 2], [1, 2]]
    assert "step 1 · beam 2 · pruned" in pruned.hovertext[1]
    alive = _nodes(fig, "alive")
    assert list(alive.text) == ["a", "&lt;b&gt;x&lt;/b&gt;", "d"]
    assert "extends beam 1 of step 0" in alive.hovertext[2]


def test_the_chosen_path_is_highlighted(synth: type) -> None:
    fig = beam_tree(synth.beam_run())
    chosen = next(t for t in fig.data if t.name == "chosen path")
    assert list(chosen.x) == [0, 1, None] and list(chosen.y) == [0, 1, None]
    others = next(t for t in fig.data if t.name == "extends")
    assert len(others.x) == 2 * 3  # beam 0 ← 1 and beam 2 ← 0 at step 1
    alive, finished = _nodes(fig, "alive"), _nodes(fig, "finished")
    assert list(alive.marker.line.color) == ["crimson", "white", "white"]
    assert list(finished.marker.line.color) == ["crimson"]


def test_candidates_default_to_the_chosen_paths_beam(synth: type) -> None:
    run = synth.beam_run()
    bars = candidate_bars(run, 1).data[0]  # the chosen path extends live beam 0 at step 1
    assert list(bars.y) == ["0 · &lt;/s&gt;", "1 · e"]
    np.testing.assert_allclose(bars.x, [0.82, 0.13])
    assert list(bars.marker.color) == ["crimson", "rgb(31,119,180)"]
    other = candidate_bars(run, 1, row=1).data[0]
    assert list(other.y) == ["0 · d", "1 · a"] and "crimson" not in list(other.marker.color)


def test_bad_step_or_beam_is_named(synth: type) -> None:
    with pytest.raises(ValueError, match="step 2"):
        candidate_bars(synth.beam_run(), 2)
    with pytest.raises(ValueError, match="beam 5"):
        candidate_bars(synth.beam_run(), 0, row=5)


def test_markup_tokens_are_escaped(synth: type) -> None:
    for fig in (beam_tree(synth.beam_run()), candidate_bars(synth.beam_run(), 0)):
        data = json.dumps(json.loads(fig.to_json())["data"])
        assert "<b>x" not in data and "&lt;b&gt;x&lt;/b&gt;" in data
