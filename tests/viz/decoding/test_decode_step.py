"""One decoding step for the app: the followed path, candidates, attention rows, what-if table."""

from __future__ import annotations

import json
from dataclasses import replace
from html import unescape
from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.viz.decoding.beam import beam_tree, candidate_bars
from attnlens.viz.decoding.decode_step import (
    candidates_frame,
    followed,
    followed_row,
    output_change,
    runs_table,
    scale_top,
    step_attention,
    steps_data,
    tokens_so_far,
    up_to_step,
)


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(tiny_model_dir))


def test_followed_path_is_the_best_hypothesis(lens: attnlens.Lens) -> None:
    run = lens.decode("bad cafe", strategy="beam", beam_size=3, max_len=6)
    best = run.best
    assert tokens_so_far(run, best.step) == list(best.tokens)
    for step in range(len(run.steps)):
        path = followed(run, step)
        assert len(path) == min(step, best.step) + 1  # past the output's end: the output
        row = followed_row(run, step)
        if step <= best.step:
            assert row is not None and 0 <= row < len(run.steps[step].candidates)
        else:
            assert row is None


def test_candidates_are_the_recorded_ones(lens: attnlens.Lens) -> None:
    run = lens.decode("bad", strategy="greedy", max_len=4)
    frame = candidates_frame(run, 1)
    recorded = run.steps[1].candidates[0]
    assert list(frame["token"]) == [c.token for c in recorded]
    assert frame["probability"].is_monotonic_decreasing
    assert frame["token"].iloc[0] == run.output_tokens[1]  # greedy takes the top candidate


def test_step_attention_shows_the_recorded_rows(lens: attnlens.Lens) -> None:
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


def test_what_if_table_marks_changes(lens: attnlens.Lens) -> None:
    before = lens.decode("bad", strategy="greedy", max_len=4)
    forced = "h" if before.output_tokens[0] != "h" else "g"
    after = lens.decode("bad", strategy="greedy", max_len=4, force={0: forced})
    change = output_change(before, after)
    assert change["after"].iloc[0] == forced and bool(change["changed"].iloc[0])
    same = output_change(before, before)
    assert not same["changed"].any()
    first = replace(after.best, tokens=after.best.tokens[:1])
    cut = replace(after, hypotheses=(first, *after.hypotheses[1:]))
    shorter = output_change(before, cut)  # the positions `cut` does not reach are missing
    assert shorter["after"].iloc[1:].isna().all() and shorter["changed"].iloc[1:].all()
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
    lm_run = replace(run, src_tokens=prompt, steps=steps, prefix=prompt)
    (bars,) = step_attention(lm_run, 1, 0, 0).data
    assert list(bars.x) == ["0 · &lt;s&gt;", "1 · p", "2 · q", "3 · a"]
    assert len(bars.y) == 4


@pytest.mark.parametrize("follow", [None, "lost"])
def test_the_browsers_payload_is_every_steps_figures(
    lens: attnlens.Lens, follow: str | None
) -> None:
    """Every step of steps_data, which the page draws itself, holds what candidate_bars and
    step_attention draw for that step (same titles, labels, numbers to the page's rounding),
    for the output's path and for a beam that lost; past a path's end, the note and nothing
    to draw."""
    run = lens.decode("bad cafe", strategy="beam", beam_size=3, max_len=6)
    node = None
    if follow:  # a kept beam of the last step that is not the output's end
        last = len(run.steps) - 1
        beams = [b.beam for b in run.steps[last].beams if b.status != "pruned"]
        node = next((last, b) for b in beams if (last, b) != (run.best.step, run.best.beam))
    data = steps_data(run, 1, 1, node)
    assert len(data["steps"]) == len(run.steps)
    ended = 0
    for step, entry in enumerate(data["steps"]):
        assert entry["tokens"] == " ".join(tokens_so_far(run, step, node))
        row = followed_row(run, step, node)
        if row is None:
            assert "candidates" not in entry and entry["note"].startswith("This hypothesis")
            ended += 1
            continue
        bars = candidate_bars(run, step, row, node)
        shown = entry["candidates"]
        assert shown["title"] == bars.layout.title.text.replace("<br>", "\n")
        assert shown["labels"] == [unescape(y) for y in bars.data[0].y]
        np.testing.assert_allclose(shown["probs"], bars.data[0].x, atol=5e-6)
        assert shown["shown"] == [f"{x:.4f}" for x in bars.data[0].x]  # rounded once, as the table
        colours = list(bars.data[0].marker.color)
        assert shown["taken"] == [c == data["colours"]["taken"] for c in colours]
        fig = step_attention(run, step, 1, 1, row)
        att = entry["attention"]
        assert att["title"] == fig.layout.title.text.replace("<br>", "\n")
        assert [p["title"] for p in att["panels"]] == [a.text for a in fig.layout.annotations]
        for panel, trace in zip(att["panels"], fig.data, strict=True):
            assert panel["keys"] == [unescape(x) for x in trace.x]
            np.testing.assert_allclose(panel["weights"], trace.y, atol=5e-5)
            assert all(0 <= i < len(panel["keys"]) for i in panel["tick_at"])
            assert len(panel["ticks"]) == len(panel["tick_at"])
    assert ended == (0 if follow else len(run.steps) - 1 - run.best.step)


def test_a_long_runs_steps_go_to_the_page_a_window_at_a_time(lens: attnlens.Lens) -> None:
    """Within the budget, the steps nearest the one shown, each as the whole run's payload
    has it; the one shown always, however small the budget."""
    run = lens.decode("bad cafe", strategy="greedy", max_len=12)
    whole = steps_data(run, 0, 0)["steps"]
    assert all(whole) and len(whole) == 12
    sizes = [len(json.dumps(e, ensure_ascii=False)) for e in whole]
    window = steps_data(run, 0, 0, around=6, budget=sum(sizes[4:9]))["steps"]
    kept = [i for i, e in enumerate(window) if e is not None]
    assert kept == list(range(4, 9)) and all(window[i] == whole[i] for i in kept)
    assert [i for i, e in enumerate(steps_data(run, 0, 0, around=11, budget=1)["steps"]) if e] == [
        11
    ]
    with pytest.raises(ValueError, match=r"step 12 is outside 0\.\.11"):
        steps_data(run, 0, 0, around=12)


def test_the_tree_up_to_a_step_marks_its_column_and_labels_every_node_in_view(
    lens: attnlens.Lens,
) -> None:
    """The step is a band behind its column (a line through it struck its labels out); every
    node keeps its token and score at any length: a window of the steps that fit is in view
    (past 30 steps the labels were dropped to the hover, 65 steps of lm ran into a band)."""
    run = lens.decode("bad cafe", strategy="greedy", max_len=10)
    assert len(run.steps) == 10
    tree = beam_tree(run)
    for step, window in ((2, None), (5, 3), (9, 4), (9, None)):
        fig = up_to_step(tree, step, window)
        nodes = [t for t in fig.data if t.customdata is not None]
        assert nodes and all(t.mode == "markers+text" and len(t.text) == len(t.x) for t in nodes)
        (band,) = fig.layout.shapes
        assert (band.type, band.x0, band.x1) == ("rect", step - 0.5, step + 0.5)
        first = 0 if window is None else max(0, step - window + 1)
        assert tuple(fig.layout.xaxis.range) == (first - 0.5, step + 0.5)
        assert ("drag right for the earlier" in fig.layout.xaxis.title.text) == (first > 0)
    one = lens.decode("bad cafe", strategy="greedy", max_len=1)
    assert beam_tree(one).layout.title.text.startswith("greedy · 1 step · output")


def test_a_path_that_ended_early_says_when_the_search_stops(lens: attnlens.Lens) -> None:
    run = lens.decode("bad cafe", strategy="beam", beam_size=3, max_len=6)
    notes = [e["note"] for e in steps_data(run, 0, 0)["steps"] if e["note"]]
    assert len(notes) == len(run.steps) - 1 - run.best.step
    for note in notes:
        assert f"finished at step {run.best.step}. The search went on to step" in note
        assert "stops once 3 hypotheses (the beam size) have finished" in note


def test_a_spread_heads_bars_are_drawn_on_a_scale_their_largest_weight_fills() -> None:
    """Past a few hundred keys every weight of a spread head is a few thousandths: its axis
    ends at the round number just above the largest (1 while one reaches a half), in the
    figure and in what the page draws alike."""
    assert [scale_top(np.array(w)) for w in ([0.9, 0.1], [0.5], [0.3], [0.11], [0.03])] == [
        1.0, 0.5, 0.5, 0.2, 0.05,
    ]  # fmt: skip
    assert scale_top(np.full(985, 1 / 985)) == 0.002 and scale_top(np.zeros(3)) == 1.0
    assert scale_top(np.full(8192, 1 / 8192)) == 0.0002


def test_the_step_figure_and_payload_end_each_panels_axis_at_its_top(
    lens: attnlens.Lens,
) -> None:
    run = lens.decode("bad cafe", strategy="greedy", max_len=6)
    fig = step_attention(run, 2, 1, 0)
    entry = steps_data(run, 1, 0)["steps"][2]["attention"]
    axes = [fig.layout.yaxis, fig.layout.yaxis2]
    for panel, trace, axis in zip(entry["panels"], fig.data, axes, strict=True):
        assert panel["top"] == scale_top(np.asarray(trace.y)) >= max(trace.y)
        assert tuple(axis.range) == (0, panel["top"])


def test_the_norm_measure_draws_each_weight_times_what_its_key_carried(lens: attnlens.Lens) -> None:
    """The browser's payload and the downloadable figure show αᵢⱼ ‖f_h(xⱼ)‖ of the followed row
    under the norm measure, and say so in their titles and axes."""
    run = lens.decode("bad cafe", max_len=6)
    assert run.has_norms
    step = 3
    row = followed_row(run, step)
    assert row is not None
    record = run.steps[step]
    assert record.decoder_self_carried is not None and record.cross_carried is not None
    cross, own = record.measured("cross", "norm"), record.measured("decoder_self", "norm")
    assert cross is not None and own is not None
    np.testing.assert_array_equal(own, record.decoder_self_attention * record.decoder_self_carried)
    want = [cross[1, 0, row], own[1, 0, row]]
    fig = step_attention(run, step, 1, 0, measure="norm")
    assert "norms αᵢⱼ‖f(xⱼ)‖" in fig.layout.title.text
    assert fig.layout.yaxis.title.text == "α‖f(x)‖" and "α‖f(x)‖" in fig.data[0].hovertemplate
    alphas = [record.cross_attention[1, 0, row], record.decoder_self_attention[1, 0, row]]  # type: ignore[index]
    for bar, expected, alpha in zip(fig.data, want, alphas, strict=True):
        np.testing.assert_allclose(np.asarray(bar.y), expected, rtol=1e-6)
        assert not np.allclose(expected, alpha)  # not the weights
    entry = steps_data(run, 1, 0, measure="norm")["steps"][step]["attention"]
    assert entry["axis"] == "α‖f(x)‖" and "norms" in entry["title"]
    for panel, expected in zip(entry["panels"], want, strict=True):
        np.testing.assert_allclose(panel["weights"], expected, rtol=1e-3)
        assert panel["top"] >= max(panel["weights"])
    weights = steps_data(run, 1, 0)["steps"][step]["attention"]
    assert weights["axis"] == "weight" and "weights αᵢⱼ" in weights["title"]


def test_a_run_without_norms_offers_the_weight_only_and_says_why(lens: attnlens.Lens) -> None:
    """A record saved before steps kept their norms loads without them, and asking it for the
    norm measure names why; its weights draw as before. A measure that does not exist is
    refused by name."""
    run = lens.decode("bad cafe", max_len=4)
    tree = run.to_dict()
    for step in tree["steps"]:
        del step["decoder_self_carried"], step["cross_carried"]
    older = type(run).from_dict(tree)
    assert not older.has_norms and older.steps[0].decoder_self_carried is None
    with pytest.raises(ValueError, match="holds no norms: this record holds no norms"):
        step_attention(older, 0, 0, 0, measure="norm")
    assert step_attention(older, 0, 0, 0).data[0].y is not None
    with pytest.raises(ValueError, match="measure must be one of weight, norm"):
        step_attention(run, 0, 0, 0, measure="size")  # type: ignore[arg-type]
    back = type(run).from_json(run.to_json())
    assert back.equals(run) and back.has_norms


def test_a_norms_scale_ends_at_a_round_number_above_its_largest() -> None:
    assert scale_top(np.array([0.3, 1.7])) == 2.0 and scale_top(np.array([3.2])) == 5.0
    assert scale_top(np.array([12.0])) == 20.0 and scale_top(np.array([1.0])) == 1.0
