"""One decoding step for the app: the followed path, candidates, attention rows, what-if table."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import model
import viz
from viz.decode_step import (
    candidates_frame,
    followed,
    followed_row,
    output_change,
    runs_table,
    step_attention,
    tokens_so_far,
    up_to_step,
)


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> model.Lens:
    return model.load(str(tiny_model_dir))


def test_followed_path_is_the_best_hypothesis(lens: model.Lens) -> None:
    run = lens.decode("bad cafe", strategy="beam", beam_size=3, max_len=6)
    best = run.best
    assert tokens_so_far(run, best.step) == list(best.tokens)
    for step in range(len(run.steps)):
        path = followed(run, step)
        assert len(path) == step + 1
        assert 0 <= followed_row(run, step) < len(run.steps[step].candidates)


def test_candidates_are_the_recorded_ones(lens: model.Lens) -> None:
    run = lens.decode("bad", strategy="greedy", max_len=4)
    frame = candidates_frame(run, 1)
    recorded = run.steps[1].candidates[0]
    assert list(frame["token"]) == [c.token for c in recorded]
    assert frame["probability"].is_monotonic_decreasing
    assert frame["token"].iloc[0] == run.output_tokens[1]  # greedy takes the top candidate


def test_step_attention_shows_the_recorded_rows(lens: model.Lens) -> None:
    run = lens.decode("bad", strategy="greedy", max_len=4)
    fig = step_attention(run, 2, 1, 0)
    cross, self_ = fig.data
    record = run.steps[2]
    assert record.cross_attention is not None
    np.testing.assert_allclose(cross.y, record.cross_attention[1, 0, 0])
    np.testing.assert_allclose(self_.y, record.decoder_self_attention[1, 0, 0])
    assert len(self_.x) == 3 and self_.x[0] == "0 · &lt;s&gt;"
    with pytest.raises(ValueError, match="head 5 is outside"):
        step_attention(run, 0, 0, 5)
    with pytest.raises(ValueError, match="step 9 is outside"):
        step_attention(run, 9, 0, 0)


def test_tree_cut_at_a_step(lens: model.Lens) -> None:
    run = lens.decode("bad", strategy="beam", beam_size=2, max_len=5)
    fig = up_to_step(viz.beam_tree(run), 1)
    assert tuple(fig.layout.xaxis.range) == (-0.5, 1.5)
    assert fig.layout.title.text.endswith("up to step 1")
    nodes = [t for t in json.loads(fig.to_json())["data"] if t.get("customdata") is not None]
    assert nodes and all(isinstance(t["customdata"], list) for t in nodes)  # clickable in the app
    edges = [t for t in fig.data if t.mode == "lines"]
    ends = [x for t in edges for x in list(t.x)[1::3]]
    assert ends and max(ends) == 1  # edges into step 1 kept, none into the steps ahead
    full = [x for t in viz.beam_tree(run).data if t.mode == "lines" for x in list(t.x)[1::3]]
    assert max(full) == len(run.steps) - 1 > 1
    assert not [t for t in up_to_step(viz.beam_tree(run), 0).data if t.mode == "lines" and t.x]


def test_what_if_table_marks_changes(lens: model.Lens) -> None:
    before = lens.decode("bad", strategy="greedy", max_len=4)
    forced = "h" if before.output_tokens[0] != "h" else "g"
    after = lens.decode("bad", strategy="greedy", max_len=4, force={0: forced})
    change = output_change(before, after)
    assert change["after"].iloc[0] == forced and bool(change["changed"].iloc[0])
    same = output_change(before, before)
    assert not same["changed"].any()
    table = runs_table({"a": before, "b": after})
    assert list(table["run"]) == ["a", "b"] and table["score"].iloc[0] == pytest.approx(
        before.score
    )


def test_a_decoder_only_step_attends_over_the_prompt_and_the_tokens_so_far(synth: type) -> None:
    run = synth.greedy_run()
    prompt = ("<s>", "p", "q")  # a decoder-only run lists its prompt as its source
    steps = tuple(
        replace(
            s,
            cross_attention=None,
            decoder_self_attention=np.full((1, 1, 1, 3 + t), 1 / (3 + t), dtype=np.float32),
        )
        for t, s in enumerate(run.steps)
    )
    lm_run = replace(run, src_tokens=prompt, steps=steps)
    (bars,) = step_attention(lm_run, 1, 0, 0).data
    assert list(bars.x) == ["0 · &lt;s&gt;", "1 · p", "2 · q", "3 · a"]
    assert len(bars.y) == 4
