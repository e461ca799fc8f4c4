"""Greedy vs beam side by side."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from attnlens.viz import compare_runs


def test_one_panel_per_run_with_each_output_token(synth: type) -> None:
    fig = compare_runs({"greedy": synth.greedy_run(), "beam 2": synth.beam_run()})
    greedy, beam = fig.data
    assert list(greedy.x) == ["0 · a", "1 · e"] and list(greedy.y) == [-0.1, -0.5]
    assert list(beam.x) == ["0 · a", "1 · &lt;/s&gt;"] and list(beam.y) == [-0.1, -0.2]
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0].startswith("greedy · score -0.600") and "beam 2 · score -0.300" in titles[1]
    assert greedy.xaxis != beam.xaxis
    # each bar's token at the figure's one text size, not shrunk to the bar's width
    assert greedy.constraintext == beam.constraintext == "none"


def test_tokens_are_written_on_their_bars_only_while_they_fit(
    synth: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnlens.viz.decoding import compare

    runs = {"greedy": synth.greedy_run(), "beam 2": synth.beam_run()}  # 2 tokens each
    assert [list(bars.text) for bars in compare_runs(runs).data] == [
        ["a", "e"],
        ["a", "&lt;/s&gt;"],
    ]
    monkeypatch.setattr(compare, "LABELLED_BARS", 1)
    assert [bars.text for bars in compare_runs(runs).data] == [None, None]  # axis and hover


def test_markup_in_output_is_escaped_and_empty_refused(synth: type) -> None:
    run = synth.beam_run()
    swapped = type(run)(run.strategy, run.params, run.src_tokens, run.hypotheses[::-1], run.steps)
    data = json.dumps(json.loads(compare_runs({"<i>beam</i>": swapped}).to_json()))
    assert "<b>x" not in data and "<i>beam" not in data and "&lt;b&gt;x&lt;/b&gt;d" in data
    with pytest.raises(ValueError, match="at least one run"):
        compare_runs({})


def test_long_outputs_are_cut_in_titles_only(synth: type) -> None:
    run = synth.greedy_run()
    best = replace(run.best, text="x" * 50)
    long = replace(run, hypotheses=(best,))
    title = compare_runs({"greedy": long}).layout.annotations[0].text
    assert title.endswith("“" + "x" * 19 + "…”")
