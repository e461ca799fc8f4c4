"""The beam tree, the followed path and the candidate bars, on hand-made beam searches."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from attnlens.viz import beam_tree, candidate_bars
from attnlens.viz.decoding.beam import CHOSEN, FOLLOWED, followed, followed_row
from attnlens.viz.decoding.decode_step import tokens_so_far


def _trace(fig: object, name: str) -> object:
    return next(t for t in fig.data if t.name == name)  # type: ignore[attr-defined]


def test_kept_nodes_carry_step_beam_and_their_cumulative_score(synth: type) -> None:
    fig = beam_tree(synth.beam_run())
    alive = _trace(fig, "alive")
    assert list(alive.text) == ["a -0.10", "&lt;b&gt;x&lt;/b&gt; -1.00", "d -1.10"]
    assert [list(c) for c in alive.customdata] == [[0, 0], [0, 1], [1, 0]]
    assert "extends rank 1 of step 0" in alive.hovertext[2]
    finished = _trace(fig, "finished")
    assert list(finished.text) == ["&lt;/s&gt; -0.30"] and list(finished.y) == [0]  # a's row


def test_beam_rows_are_whole_numbers_and_pruned_ones_collapse_below(synth: type) -> None:
    fig = beam_tree(synth.beam_run())
    axis = fig.layout.yaxis
    assert list(axis.tickvals) == [0, 1, 2] and list(axis.ticktext) == ["", "", "pruned"]
    pruned = _trace(fig, "pruned (count)")
    assert list(pruned.x) == [0, 1] and list(pruned.y) == [2, 2]  # one node a step, one row
    assert list(pruned.text) == ["1", "1"] and pruned.marker.opacity < 1
    assert "c -3.000" in pruned.hovertext[0] and "e -2.100" in pruned.hovertext[1]
    assert pruned.customdata is None  # a click on it follows nothing
    kept_edges = _trace(fig, "extends")
    assert 2 not in list(kept_edges.y)  # no edge runs into a pruned continuation


def test_the_output_path_is_red_and_a_followed_beam_orange(synth: type) -> None:
    run = synth.beam_run()
    chosen = _trace(beam_tree(run), "output's path")
    assert chosen.line.color == CHOSEN
    assert list(chosen.x) == [0, 1, None] and list(chosen.y) == [0, 0, None]  # on a's row
    fig = beam_tree(run, node=(0, 1))  # follow '<b>x</b>': it goes on as 'd' (beam 0, step 1)
    mine = _trace(fig, "followed beam")
    assert mine.line.color == FOLLOWED and list(mine.y) == [1, 1, None]  # on x's row
    alive = _trace(fig, "alive")
    outline = dict(zip(map(tuple, alive.customdata), alive.marker.line.color, strict=True))
    assert outline[(0, 1)] == outline[(1, 0)] == FOLLOWED and outline[(0, 0)] == CHOSEN


def test_by_default_the_step_through_follows_the_beam_that_becomes_the_output(
    synth: type,
) -> None:
    """The issue: past the step where the output finished, the step-through showed the
    losing beam the search went on with ('<b>x</b> d e') as 'tokens so far'."""
    run = synth.beam_run_past_the_output()
    assert tokens_so_far(run, 2) == ["a", "</s>"]  # the output, not '<b>x</b> d e'
    assert followed_row(run, 2) is None  # the output ended at step 1: no candidates of its own
    assert followed_row(run, 1) == 0 and tokens_so_far(run, 0) == ["a"]
    losing = (2, 0)
    assert (
        tokens_so_far(run, 2, losing) == ["<b>x</b>", "d", "e"]
        and followed_row(run, 2, losing) == 0
    )


def test_following_a_live_beam_goes_on_through_its_best_kept_child(synth: type) -> None:
    run = synth.beam_run_past_the_output()
    assert [b.token for b in followed(run, 2, (0, 1))] == ["<b>x</b>", "d", "e"]
    assert [b.token for b in followed(run, 2, (1, 1))] == ["a", "</s>"]  # finished: ends there
    with pytest.raises(ValueError, match="beam 7"):
        followed(run, 1, (1, 7))


def test_candidates_are_ranked_from_one_and_mark_what_the_followed_path_took(
    synth: type,
) -> None:
    run = synth.beam_run()
    bars = candidate_bars(run, 1).data[0]  # the output's path extends live beam 0 at step 1
    assert list(bars.y) == ["1 · &lt;/s&gt;", "2 · e"]
    np.testing.assert_allclose(bars.x, [0.82, 0.13])
    assert list(bars.marker.color) == [CHOSEN, "rgb(31,119,180)"]
    other = candidate_bars(run, 1, row=1).data[0]
    assert list(other.y) == ["1 · d", "2 · a"] and CHOSEN not in list(other.marker.color)
    mine = candidate_bars(run, 1, node=(1, 0)).data[0]  # following 'd': live beam 1 took 'd'
    assert list(mine.marker.color) == [CHOSEN, "rgb(31,119,180)"]


def test_bad_step_or_beam_is_named(synth: type) -> None:
    with pytest.raises(ValueError, match="step 2"):
        candidate_bars(synth.beam_run(), 2)
    with pytest.raises(ValueError, match="beam 5"):
        candidate_bars(synth.beam_run(), 0, row=5)


def test_markup_tokens_are_escaped(synth: type) -> None:
    for fig in (beam_tree(synth.beam_run()), candidate_bars(synth.beam_run(), 0)):
        data = json.dumps(json.loads(fig.to_json())["data"])
        assert "<b>x" not in data and "&lt;b&gt;x&lt;/b&gt;" in data


def test_a_long_output_is_clipped_in_the_title() -> None:
    """lm's 96-token greedy output ran past the figure's right edge, score and all."""
    from attnlens import load
    from attnlens.viz.decoding.beam import OUTPUT_CHARS
    from helpers.apptest import require_bundled

    require_bundled("lm")
    run = load("lm").decode("The return statement", "greedy")
    title = beam_tree(run).layout.title.text
    assert len(run.best.text) > OUTPUT_CHARS
    assert "…”" in title and title.endswith(f"(score {run.best.score:.2f})")  # as on its node
    assert len(title) < 100


def test_every_kept_node_is_labelled_with_its_token_and_score_at_any_length(
    synth: type,
) -> None:
    """Past 8 steps the labels lost their scores (on hover only): on a projector nobody
    could see why beam search beat greedy."""
    run = synth.beam_run()
    steps = tuple(dataclasses.replace(run.steps[1], step=t) for t in range(1, 9))
    long = dataclasses.replace(run, steps=(run.steps[0], *steps))
    fig = beam_tree(long)
    alive = _trace(fig, "alive")
    assert list(alive.text)[:3] == ["a -0.10", "&lt;b&gt;x&lt;/b&gt; -1.00", "d -1.10"]
    assert len(alive.text) == len(alive.x) == 2 + 8
    assert "score -1.1000" in alive.hovertext[2]
    assert fig.layout.xaxis.title.text == "step"


def _crossings(fig: object) -> int:
    """Pairs of drawn edges between the same two steps that cross, read off the figure."""
    edges = _trace(fig, "extends")
    xs, ys = list(edges.x), list(edges.y)  # type: ignore[attr-defined]
    segments = [(xs[i], ys[i], ys[i + 1]) for i in range(0, len(xs), 3)]
    return sum(
        1
        for i, (t, a0, a1) in enumerate(segments)
        for u, b0, b1 in segments[i + 1 :]
        if t == u and (a0 - b0) * (a1 - b1) < 0
    )


def test_a_re_ranked_beam_keeps_its_row_and_no_edges_cross(synth: type) -> None:
    """At step 1 '<b>x</b> d' overtakes 'a': drawn at their ranks, the two edges crossed."""
    fig = beam_tree(synth.beam_run())
    assert _crossings(fig) == 0
    alive = _trace(fig, "alive")
    rows = dict(zip(map(tuple, alive.customdata), alive.y, strict=True))
    assert rows[(0, 1)] == rows[(1, 0)] == 1  # 'd' (now ranked first) stays on x's row


def test_the_legend_is_whole_below_the_plot(synth: type) -> None:
    """At the right, projector-sized entries were cut at the figure's edge ("output's pat")."""
    fig = beam_tree(synth.beam_run(), node=(0, 1))
    names = [t.name for t in fig.data]
    assert names == ["extends", "followed beam", "output's path", "alive", "finished",
                     "pruned (count)"]  # fmt: skip
    legend = fig.layout.legend
    assert legend.orientation == "h" and (legend.yref, legend.y) == ("container", 0)


def test_eight_beams_by_thirty_steps_of_lm_read_on_a_projector() -> None:
    """lm at 8 beams × 30 steps was a mesh of single characters; now every kept node says its
    token and score, no edges cross, a hypothesis that goes on keeps its row, and at 24 px on
    a 1920 px projector a window of at least 8 steps is in view with no labels touching."""
    from attnlens import load
    from attnlens.viz.decoding.beam import steps_that_fit
    from attnlens.viz.decoding.beam_rows import kept as kept_of
    from attnlens.viz.decoding.beam_rows import rank_rows, rows_of
    from helpers.apptest import require_bundled

    require_bundled("lm")
    run = load("lm").decode("The return statement", "beam", beam_size=8, max_len=30)
    assert len(run.steps) == 30
    fig = beam_tree(run)
    nodes = [t for t in fig.data if t.name in ("alive", "finished")]
    kept = sum(b.status != "pruned" for r in run.steps for b in r.beams)
    assert sum(len(t.text) for t in nodes) == kept > 200
    assert all(re.fullmatch(r".+ -?\d+\.\d\d", text) for t in nodes for text in t.text)
    assert _crossings(fig) == 0

    def stays(at: dict[tuple[int, int], int]) -> int:  # best children on their parent's row
        return sum(
            at[(r.step, b.beam)] == at[(r.step - 1, b.parent)]
            for r in run.steps[1:]
            for b in r.beams
            if b.parent is not None
            and b.status != "pruned"
            and b is next(c for c in r.beams if c.parent == b.parent and c.status != "pruned")
        )

    parents = sum(len({b.parent for b in kept_of(run, r.step)}) for r in run.steps[1:])
    assert stays(rows_of(run)) >= max(0.6 * parents, 2 * stays(rank_rows(run)))
    assert steps_that_fit(run, 1500, 24) >= 8


def test_sampling_candidates_say_they_are_the_models_p_when_sampling_reshaped_it(
    synth: type,
) -> None:
    """Decode draws the model's probabilities; at T = 2, top-k 5 they read as what was drawn
    from (0.54 / 0.40 where sampling's own were flatter)."""
    base = synth.greedy_run()

    def title(**params: object) -> str:
        run = dataclasses.replace(base, strategy="sample", params={"seed": 0, **params})
        return str(candidate_bars(run, 1).layout.title.text)

    note = "the model's p, before temperature, top-k and top-p"
    assert note in title(temperature=2.0, top_k=5, top_p=None)
    assert note in title(temperature=1.0, top_k=None, top_p=0.9)
    assert note not in title(temperature=1.0, top_k=None, top_p=None)  # nothing reshaped
    assert note not in str(candidate_bars(base, 1).layout.title.text)
